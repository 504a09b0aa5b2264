package core

import "github.com/vppsvc/vppsvc/vppcfg/driverapi"

// Item, Key and Kind are the driver contract's, as in vppcfg.
type (
	Item = driverapi.Item
	Key  = driverapi.Key
	Kind = driverapi.Kind
)

// KindLimit is one past the last kind (the size of the descriptor table).
const KindLimit = driverapi.KindLimit

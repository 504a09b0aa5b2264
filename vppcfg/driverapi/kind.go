package driverapi

// The kinds, in creation order (dependencies first; deletes run in reverse
// order): vppcfg re-exports them, and says what each is. They are here so
// that the contract can name the merged value of a kind (ACLAssignment).
const (
	KindNAT44Global Kind = iota + 1
	KindNAT44Address
	KindNAT44Interface
	KindNAT44StaticMapping
	KindNAT44IdentityMapping
	KindNAT44LBMapping
	KindCNATSnatConfig
	KindCNATSnatInterface
	KindInterfaceFeature
	KindCNATTranslation
	KindACL
	KindACLBinding
	KindDropRoute
	// KindLimit is one past the last kind (the size of the descriptor table).
	KindLimit
)

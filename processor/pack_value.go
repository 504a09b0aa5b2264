package processor

import (
	"github.com/vppsvc/vppsvc/model"
)

// serviceOnePort is a value of one port with its port list: 208 bytes,
// a size class of Go's allocator, as the value (160) and the port (48)
// apart.
type serviceOnePort struct {
	svc  model.ContivService
	port [1]model.NamedPort
}

// serviceOneBackend is a value of one port and one backend with their
// lists: 248 bytes in the 256-byte class, as the three apart (160, 48 and
// 48).
type serviceOneBackend struct {
	serviceOnePort
	backend [1]model.ServiceBackend
}

// allocValue copies a value that ConvertService drafted on its stack (d,
// without ports, and its ports, without backends) into the heap and returns it with room
// for n backends (empty, of capacity n), in as few allocations as its shape
// allows: most services have one port and one endpoint, and were four
// allocations (value, ports, backends and the endpoint list they were
// picked from) where they are now one, of the same bytes.
func allocValue(d *model.ContivService, ports []model.NamedPort, n int) (*model.ContivService, []model.ServiceBackend) {
	var v *model.ContivService
	var room []model.ServiceBackend
	switch {
	case len(ports) == 1 && n == 1:
		b := &serviceOneBackend{serviceOnePort: serviceOnePort{svc: *d, port: [1]model.NamedPort{ports[0]}}}
		v, room = &b.svc, b.backend[:0]
		v.Ports = b.port[:]
	case len(ports) == 1:
		b := &serviceOnePort{svc: *d, port: [1]model.NamedPort{ports[0]}}
		v = &b.svc
		v.Ports = b.port[:]
	default:
		v = new(model.ContivService)
		*v = *d
		v.Ports = append([]model.NamedPort(nil), ports...)
	}
	if room == nil && n > 0 {
		room = make([]model.ServiceBackend, 0, n)
	}
	return v, room
}

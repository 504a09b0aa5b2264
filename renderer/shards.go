package renderer

import (
	"fmt"
	"hash/fnv"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

// DefaultACLShards is the default number of filter ACLs of a renderer.
// With 64 shards a cluster of 10,000 services that all need filtering puts
// about 160 services' rules in each ACL, so one service change replaces a
// rule list of a few hundred rules; fewer shards make each replace larger,
// more make every interface's ACL list longer.
const DefaultACLShards = 64

// MaxACLShards bounds the number of filter ACLs of a renderer. VPP
// evaluates the ACL lists of an interface as one; hundreds of nearly empty
// ACLs bring no benefit.
const MaxACLShards = 256

// ACLShards is the fixed set of filter ACLs of one renderer.
//
// Filtering a service (dropping its frontends without endpoints, applying
// its loadBalancerSourceRanges) cannot use one ACL per service: VPP takes
// the ACLs of an interface as one list (ACLInterfaceSetACLList), so adding
// or removing one ACL rewrites the list of every frontend interface, a cost
// that grows with the number of filtered services (measured at 450–530 ms
// per change with about 3,450 service ACLs, docs/performance.md ("IPv6 renderer")).
// Instead the rules of every service go to one of Count ACLs, picked by a
// stable hash of the service ID (Of). The shards are bound once on every
// frontend interface, so bindings change only when interfaces come and go
// (and when filtering starts or stops, below), and a service change replaces
// the rules of its one shard in place (one ACLAddReplace on the same index),
// at a cost proportional to the services of that shard.
//
// The shards exist, all of them and bound on every frontend interface
// before the shared permit-all ACL, while at least one service of the
// renderer has filter rules (renderer.Core). An empty shard then holds one
// placeholder rule instead of none, because VPP denies everything that
// reaches an ACL with no rules. The placeholder permits traffic between
// unspecified addresses only: no frontend has the unspecified address
// (Frontends never yields it), so no later filter rule could have denied
// what it matches, and the permit-all ACL after the shards permits it
// anyway; it changes no packet's verdict. Binding every shard, rather than
// only the non-empty ones, keeps the bindings fixed while services come
// and go: a shard turning empty or non-empty would otherwise rewrite every
// frontend interface's list (and flush its reflect sessions). Only the
// first filtered service and the removal of the last one bind and unbind
// the shards, so a renderer with nothing to filter (typically the IPv6
// renderer of an IPv4-only cluster) puts no ACL at all on the interfaces.
type ACLShards struct {
	// Renderer is the renderer's name, the prefix of the ACL names.
	Renderer string
	// Count is the number of shards, 1 to MaxACLShards.
	Count int
	// Family is the family of the renderer's rules and of the placeholder.
	Family Family
}

// Name returns the name (and VPP tag) of shard i: "<renderer>-filter-NN".
// Names are deterministic, so a restarted agent adopts the ACLs it made
// before, and the bounded renderer name keeps them short of MaxLabelLen.
func (s ACLShards) Name(i int) string { return fmt.Sprintf("%s-filter-%02d", s.Renderer, i) }

// Of returns the shard of a service: FNV-1a of "namespace/name" modulo
// Count. The hash is fixed by its specification, so a service keeps its
// shard across restarts and versions (with the same Count).
func (s ACLShards) Of(id model.ServiceID) int {
	h := fnv.New32a()
	h.Write([]byte(id.String()))
	return int(h.Sum32() % uint32(s.Count))
}

// ACL returns shard i holding rules, or the placeholder when rules is empty.
func (s ACLShards) ACL(i int, rules []vppcfg.ACLRule) *vppcfg.ACL {
	if len(rules) == 0 {
		rules = []vppcfg.ACLRule{s.Placeholder()}
	}
	return &vppcfg.ACL{Name: s.Name(i), Rules: rules}
}

// Placeholder is the rule of an empty shard (see ACLShards and
// vppcfg.PlaceholderRule).
func (s ACLShards) Placeholder() vppcfg.ACLRule {
	return vppcfg.PlaceholderRule(s.Family == IPv6)
}

// Bindings returns the node-wide filter items of a renderer: on input of
// every frontend interface, each shard at ServiceACLPriority and the shared
// permit-all ACL after them, plus the permit-all ACL itself. Clients (local
// pods, the host, remote pods and external clients on the uplink) reach
// the frontends only through these interfaces.
func (s ACLShards) Bindings(frontendIfs model.Interfaces) []vppcfg.Item {
	items := make([]vppcfg.Item, 0, 1+(s.Count+1)*len(frontendIfs))
	items = append(items, PermitAllACL())
	for _, ifName := range frontendIfs {
		for i := range s.Count {
			items = append(items, &vppcfg.ACLBinding{
				Interface: ifName,
				Direction: vppcfg.ACLInput,
				ACL:       s.Name(i),
				Priority:  ServiceACLPriority,
			})
		}
		items = append(items, PermitAllBinding(ifName))
	}
	return items
}

// ValidateACLShards checks a configured shard count; field is its YAML path.
func ValidateACLShards(field string, n int) error {
	if n < 1 || n > MaxACLShards {
		return FieldErrorf(field, "%d is outside 1–%d", n, MaxACLShards)
	}
	return nil
}

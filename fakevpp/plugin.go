package fakevpp

import (
	"fmt"
	"sort"
	"sync"

	"go.fd.io/govpp/api"
)

// plugin is one VPP plugin (or core module) of the fake: its per-VPP state,
// its API handlers and its graph nodes. Each plugin file registers itself from
// init(), so adding a plugin (cnat, for example) means adding files, not
// editing the dispatcher or the packet pipeline. See docs/fakevpp.md.
type plugin struct {
	// name keys the plugin's state in VPP.state and orders Dump sections
	// together with order.
	name  string
	order int

	// newState returns the plugin's empty state. It is called by New and by
	// Restart (VPP keeps nothing across a restart).
	newState func(v *VPP) any

	// handlers serve API requests, keyed by VPP message name.
	handlers map[string]handlerFunc

	// input runs on ip4-unicast/ip6-unicast of the ingress interface,
	// lookup at FIB-lookup time (before the longest-prefix match: cnat's VIP
	// path), output on ip4-output/ip6-output of the egress interface. Nodes of
	// all plugins run sorted by their order.
	input, lookup, output []node

	// features are the plugin's nodes that FeatureEnableDisable switches on
	// per interface (feature.go serves the message for every plugin).
	features []arcFeature

	// interfaceAdded and interfaceDeleted let the plugin react to interface
	// life cycle (resolve pending objects, drop bindings). interfaceDeleted
	// runs before the interface leaves the table.
	interfaceAdded, interfaceDeleted func(v *VPP, ifc *iface)

	// clockAdvanced runs after Advance moved the fake clock, for plugins
	// whose VPP counterpart scans in the background (cnat's session scanner).
	clockAdvanced func(v *VPP)

	// dump appends the plugin's section to VPP.Dump.
	dump func(v *VPP, w *dumpWriter)
}

// node is one graph node of a plugin in the packet pipeline. run inspects and
// may rewrite c.pkt, add steps, or end the packet with c.drop or c.deliverLocal.
type node struct {
	name  string
	order int
	run   func(c *pktCtx)
}

// Node orders used by the built-in plugins; a new plugin picks free values in
// between. Input: cnat-input 10, acl-in 20, nat44-ed 30, cnat-snat 35,
// ip4/ip6-not-enabled 40 (ip_enable.go; VPP orders it after every plugin
// feature, just before the lookup). Output: nat44-ed in2out-output 10,
// acl-out 20, cnat-output 30.
const (
	orderCnatInput  = 10
	orderACLIn      = 20
	orderNAT44In    = 30
	orderCnatSnat   = 35
	orderNotEnabled = 40
	orderNAT44Out   = 10
	orderACLOut     = 20
	orderCnatOutput = 30
)

// call is the context of one API request. VPP serves one request at a
// time, so one call per VPP serves them all.
type call struct {
	v      *VPP
	client *client
	one    [1]api.Message // reply's slice
}

// reply is a shorthand for handlers that answer with one message. The slice
// is the call's own: the answers are encoded before the next request.
func (c *call) reply(m api.Message) []api.Message {
	c.one[0] = m
	return c.one[:1]
}

// handlerFunc serves one request. It returns the messages VPP sends back in
// order: one reply, or the details of a dump (the control-ping reply that ends
// a dump is a separate request), or details followed by a reply for the
// cursor-style "_get" messages. req is the handler's for the duration of the
// call only (decodeRequest decodes the next request of its type into it): a
// handler keeps copies of its fields, never req or a pointer into it. The
// slices and strings in it are made anew by each decoding: a handler may
// keep those.
type handlerFunc func(c *call, req api.Message) []api.Message

// handlerEntry pairs a message name with its handler.
type handlerEntry struct {
	name string
	fn   handlerFunc
}

// handle adapts a typed handler. The message name is taken from Req, so a
// handler cannot be registered under the wrong name.
func handle[Req api.Message](fn func(c *call, req Req) []api.Message) handlerEntry {
	var zero Req
	return handlerEntry{
		name: zero.GetMessageName(),
		fn: func(c *call, req api.Message) []api.Message {
			return fn(c, req.(Req))
		},
	}
}

// handlers builds a plugin's handler map.
func handlers(entries ...handlerEntry) map[string]handlerFunc {
	m := make(map[string]handlerFunc, len(entries))
	for _, e := range entries {
		m[e.name] = e.fn
	}
	return m
}

var (
	pluginsMu sync.Mutex
	plugins   []*plugin
	pipeline  = sync.OnceValue(buildPipeline)
)

// registerPlugin is called from init() of each plugin file.
func registerPlugin(p *plugin) {
	pluginsMu.Lock()
	defer pluginsMu.Unlock()
	for _, q := range plugins {
		if q.name == p.name {
			panic(fmt.Sprintf("fakevpp: plugin %q registered twice", p.name))
		}
		for name := range p.handlers {
			if _, dup := q.handlers[name]; dup {
				panic(fmt.Sprintf("fakevpp: message %s served by %s and %s", name, q.name, p.name))
			}
		}
		for _, f := range p.features {
			for _, g := range q.features {
				if f.key == g.key {
					panic(fmt.Sprintf("fakevpp: feature %s offered by %s and %s", f.key, q.name, p.name))
				}
			}
		}
	}
	plugins = append(plugins, p)
	sort.SliceStable(plugins, func(i, j int) bool {
		if plugins[i].order != plugins[j].order {
			return plugins[i].order < plugins[j].order
		}
		return plugins[i].name < plugins[j].name
	})
}

// graph is the merged, ordered node lists and handler table of all plugins.
type graph struct {
	input, lookup, output []node
	handlers              map[string]handlerFunc
	byID                  []handlerFunc  // handlers by message ID (msgTable)
	slot                  map[string]int // plugin name → index in plugins (VPP.state)
	features              map[featureKey]arcFeature
	plugins               []*plugin
}

func buildPipeline() *graph {
	pluginsMu.Lock()
	defer pluginsMu.Unlock()
	g := &graph{handlers: map[string]handlerFunc{}, features: map[featureKey]arcFeature{}, plugins: append([]*plugin(nil), plugins...),
		slot: map[string]int{}}
	for i, p := range plugins {
		g.slot[p.name] = i
		for _, f := range p.features {
			g.features[f.key] = f
		}
		g.input = append(g.input, p.input...)
		g.lookup = append(g.lookup, p.lookup...)
		g.output = append(g.output, p.output...)
		for name, h := range p.handlers {
			g.handlers[name] = h
		}
	}
	t := messages()
	g.byID = make([]handlerFunc, len(t.byID))
	for name, h := range g.handlers {
		if id, ok := t.byName[name]; ok {
			g.byID[id] = h
		}
	}
	for _, l := range []*[]node{&g.input, &g.lookup, &g.output} {
		sort.SliceStable(*l, func(i, j int) bool { return (*l)[i].order < (*l)[j].order })
	}
	return g
}

// stateKey finds a plugin's state, with its concrete type, in any VPP: by
// the plugin's index in the pipeline, looked up by name once, as every
// request reads some plugin's state.
type stateKey[T any] struct{ slot func() int }

// stateOf is the stateKey of the plugin name.
func stateOf[T any](name string) stateKey[T] {
	return stateKey[T]{slot: sync.OnceValue(func() int {
		i, ok := pipeline().slot[name]
		if !ok {
			panic(fmt.Sprintf("fakevpp: no plugin %q", name))
		}
		return i
	})}
}

// of returns the plugin's state in v.
func (k stateKey[T]) of(v *VPP) *T { return v.state[k.slot()].(*T) }

// Served returns the VPP names of the requests the fake serves with a
// model, sorted (control_ping, which every connection uses, excluded; any
// other message is answered as unmodelled). The differential suite checks
// that each has a case recorded on a real VPP.
func Served() []string {
	g := pipeline()
	out := make([]string, 0, len(g.handlers))
	for name := range g.handlers {
		out = append(out, name)
	}
	sort.Strings(out)
	return out
}

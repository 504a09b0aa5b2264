package govppdriver

import (
	"errors"
	"fmt"
	"slices"

	"go.fd.io/govpp/api"
	"go.fd.io/govpp/binapi/cnat"
	interfaces "go.fd.io/govpp/binapi/interface"

	"github.com/vppsvc/vppsvc/vppcfg/driverapi"
)

// capability is a part of VPP that some item kinds need (kindDriver.needs).
type capability uint8

const (
	// capCore is what the driver cannot do without: a VPP that lacks one
	// of its messages is incompatible (driverapi.ErrIncompatible).
	capCore capability = iota
	// capCNAT is the cnat plugin.
	capCNAT
	// capRoutes are the ip route messages.
	capRoutes
	capCount
)

// optionalCapabilities describe the capabilities a VPP may lack; the kinds
// that need one fail as unsupported without it, the others keep working.
var optionalCapabilities = [capCount]struct {
	// name is how errors name the capability.
	name string
	// probe are messages the check sends besides those of the kinds.
	probe []api.Message
	// answers, when set, asks VPP whether the capability really answers.
	answers func(d *Driver) bool
	// missing and silent are logged when messages lack, or answers says no.
	missing, silent string
}{
	capCNAT: {
		name:    "cnat plugin",
		probe:   []api.Message{&cnat.CnatGetSnatAddresses{}},
		answers: (*Driver).cnatAnswers,
		missing: "cnat plugin not usable: cnat items will fail as unsupported",
		silent:  "cnat plugin answers UNIMPLEMENTED: cnat items will fail as unsupported",
	},
	capRoutes: {
		name:    "ip route messages",
		missing: "ip route messages missing: drop routes will fail as unsupported",
	},
}

func (c capability) String() string {
	if c == capCore {
		return "core messages"
	}
	if c < capCount {
		return optionalCapabilities[c].name
	}
	return fmt.Sprintf("capability-%d", uint8(c))
}

// capabilities record what the compatibility check found.
type capabilities struct {
	// err is set when a message the driver cannot do without is missing.
	err error
	// cnat is false when the cnat plugin (or one of its messages) is missing.
	cnat bool
	// routes is false when a message DropRoute items need is missing.
	routes bool
}

// has tells whether the connected VPP offers c.
func (caps *capabilities) has(c capability) bool {
	switch c {
	case capCore:
		return true
	case capCNAT:
		return caps.cnat
	case capRoutes:
		return caps.routes
	}
	return false
}

func (caps *capabilities) set(c capability, on bool) {
	switch c {
	case capCNAT:
		caps.cnat = on
	case capRoutes:
		caps.routes = on
	}
}

// driverMessages are the requests the driver itself sends, for interfaces
// and their events, whatever the kinds.
func driverMessages() []api.Message {
	return []api.Message{&interfaces.SwInterfaceDump{}, &interfaces.WantInterfaceEvents{}, &interfaces.SwInterfaceEvent{}}
}

// messagesNeeding returns the messages of every kind that needs c, in kind order.
func messagesNeeding(c capability) []api.Message {
	var out []api.Message
	for kd := range registered() {
		if kd.needs == c {
			out = append(out, kd.messages...)
		}
	}
	return out
}

// checkCompatibility looks every message the driver sends up in the
// connected VPP. Missing optional messages switch a capability off; a
// missing required one makes the driver refuse to work
// (driverapi.ErrIncompatible).
func (d *Driver) checkCompatibility() *capabilities {
	lookup, ok := d.conn.(interface {
		GetMessageID(api.Message) (uint16, error)
	})
	if !ok {
		d.log.Warn("connection cannot look message IDs up; skipping the compatibility check")
		return &capabilities{cnat: true, routes: true}
	}
	unknown := map[string]bool{}
	missing := func(ms []api.Message) []string {
		var out []string
		for _, m := range ms {
			if _, err := lookup.GetMessageID(m); err != nil {
				out = append(out, m.GetMessageName())
				unknown[m.GetMessageName()] = true
			}
		}
		return out
	}
	caps := &capabilities{}
	if m := missing(append(driverMessages(), messagesNeeding(capCore)...)); len(m) > 0 {
		caps.err = fmt.Errorf("%w: missing messages %v", driverapi.ErrIncompatible, m)
	}
	for c := capCore + 1; c < capCount; c++ {
		opt := optionalCapabilities[c]
		if m := missing(append(slices.Clone(opt.probe), messagesNeeding(c)...)); len(m) > 0 {
			d.log.WithField("missing", m).Warn(opt.missing)
			continue
		}
		if opt.answers != nil && !opt.answers(d) {
			d.log.Warn(opt.silent)
			continue
		}
		caps.set(c, true)
	}
	if len(unknown) > 0 {
		names := make([]string, 0, len(unknown))
		for n := range unknown {
			names = append(names, n)
		}
		slices.Sort(names)
		d.log.WithField("messages", names).Debug("messages unknown to the connected VPP")
	}
	return caps
}

// cnatAnswers probes the cnat plugin: its message IDs may exist while the
// plugin is not loaded (or not emulated), and then it answers UNIMPLEMENTED.
func (d *Driver) cnatAnswers() bool {
	ctx, cancel := d.withDeadline(d.ctx)
	defer cancel()
	err := d.invoke(ctx, &cnat.CnatGetSnatAddresses{}, &cnat.CnatGetSnatAddressesReply{})
	return !errors.Is(err, api.UNIMPLEMENTED)
}

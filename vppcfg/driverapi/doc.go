// Package driverapi is the contract between the VPP layer (package vppcfg
// and its engine, vppcfg/engine) and a driver that talks to VPP (package
// govppdriver over govpp; tests use in-memory fakes): the engine plans
// operations on items and the driver applies them, dumps VPP back into
// items and reports events. It names items by their Kind (the constants,
// which vppcfg re-exports) and Key and carries them as Items; the item
// types themselves, and what each kind means, are vppcfg's. One value is
// the contract's own: ACLAssignment, an interface's ACL lists, as VPP takes
// and reports the ACL bindings merged.
package driverapi

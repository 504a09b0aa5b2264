// Package driverapi is the contract between the VPP layer (package vppcfg)
// and a driver that talks to VPP (package govppdriver over govpp; tests use
// in-memory fakes): the layer plans operations on items and the driver
// applies them, dumps VPP back into items and reports events. It names
// items by their Kind and Key and carries them as Items; the item types
// themselves, and what each kind means, are vppcfg's.
package driverapi

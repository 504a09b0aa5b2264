package host

import (
	"context"
	"fmt"
	"net/netip"
)

// The methods here change links inside the lab's own namespaces only (a
// kernel node's bridge and its pods' veths, as a bridge CNI builds them);
// nothing of theirs touches the root namespace.

// AddBridgeIn creates the Linux bridge name inside the lab's namespace ns,
// with the addresses given (the pods' gateway), and sets it up. A bridge
// of that name there already is kept.
func (l *Lab) AddBridgeIn(ns, name string, addrs []netip.Prefix) error {
	if err := l.checkInside(ns, name); err != nil {
		return err
	}
	l.mu.Lock()
	ctx := context.Background()
	ls, err := l.links(ctx, ns)
	if err == nil {
		if _, ok := findLink(ls, name); !ok {
			if _, err = l.ip(ctx, nsArgs(ns, "link", "add", "name", name, "type", "bridge")...); err == nil {
				l.log.WithFields(map[string]any{"namespace": ns, "link": name}).Info("bridge created")
			}
		}
	}
	l.mu.Unlock()
	if err != nil {
		return err
	}
	for _, a := range addrs {
		if err := l.AddAddress(ns, name, a); err != nil {
			return err
		}
	}
	_, err = l.ip(ctx, nsArgs(ns, "link", "set", "dev", name, "up")...)
	return err
}

// AddVethIn creates a veth pair between two of the lab's namespaces: name
// in ns, attached to the bridge there (hairpin on, as a bridge CNI with
// hairpinMode sets it, so a pod reaches itself through a service), and
// peer in peerNS; both up. A pair the lab created already is kept.
func (l *Lab) AddVethIn(ns, name, bridge, peerNS, peer string) error {
	if err := l.checkInside(ns, name); err != nil {
		return err
	}
	if err := l.checkInside(peerNS, peer); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx := context.Background()
	here, err := l.links(ctx, ns)
	if err != nil {
		return err
	}
	there, err := l.links(ctx, peerNS)
	if err != nil {
		return err
	}
	_, haveName := findLink(here, name)
	_, havePeer := findLink(there, peer)
	switch {
	case haveName && havePeer:
		return nil
	case haveName:
		if _, err := l.ip(ctx, nsArgs(ns, "link", "del", "dev", name)...); err != nil {
			return err
		}
	case havePeer:
		if _, err := l.ip(ctx, nsArgs(peerNS, "link", "del", "dev", peer)...); err != nil {
			return err
		}
	}
	if _, err := l.ip(ctx, nsArgs(ns, "link", "add", "name", name, "type", "veth", "peer", "name", peer, "netns", peerNS)...); err != nil {
		return err
	}
	l.log.WithFields(map[string]any{"namespace": ns, "link": name, "peer": peer, "peer_namespace": peerNS}).Info("veth created")
	for _, args := range [][]string{
		nsArgs(ns, "link", "set", "dev", name, "master", bridge),
		nsArgs(ns, "link", "set", "dev", name, "type", "bridge_slave", "hairpin", "on"),
		nsArgs(ns, "link", "set", "dev", name, "up"),
		nsArgs(peerNS, "link", "set", "dev", peer, "up"),
	} {
		if _, err := l.ip(ctx, args...); err != nil {
			return err
		}
	}
	return nil
}

// checkInside refuses a link outside the lab's namespaces (the root
// namespace included).
func (l *Lab) checkInside(ns, name string) error {
	if ns == "" || !l.isOurNamespace(ns) {
		return fmt.Errorf("link %s: namespace %q is not the lab's", name, ns)
	}
	return checkLinkName(name)
}

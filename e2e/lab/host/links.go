package host

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
)

// AddBridge creates the Linux bridge name in the root namespace, without
// any address (IPv6 disabled on it, so not even a link-local one), and
// sets it up. The lab's own bridge is kept as it is; anybody else's name
// is refused.
func (l *Lab) AddBridge(name string) error {
	if err := l.checkRootLink(name); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx := context.Background()
	ls, err := l.links(ctx, "")
	if err != nil {
		return err
	}
	exists, err := claimLink(ls, name, l.marker)
	if err != nil || exists {
		return err
	}
	if _, err := l.ip(ctx, "link", "add", "name", name, "type", "bridge"); err != nil {
		return err
	}
	l.log.WithField("link", name).Info("bridge created")
	if err := l.mark(ctx, "", name); err != nil {
		return err
	}
	if err := l.rootLinkNoIP(name); err != nil {
		return err
	}
	_, err = l.ip(ctx, "link", "set", "dev", name, "up")
	return err
}

// AddVeth creates a veth pair: name in the root namespace and peer in the
// namespace peerNS ("" for the root namespace too), both marked and up.
// The root namespace's ends must carry the lab's prefix and get no IP of
// the kernel's (IPv6 disabled on them): VPP or the bridge owns them, and
// the kernel must not answer for them. peerNS must be a namespace of the
// lab; inside it peer may be any name (eth0). A pair the lab created
// already is kept as it is.
func (l *Lab) AddVeth(name, peerNS, peer string) error {
	if err := l.checkRootLink(name); err != nil {
		return err
	}
	if peerNS == "" {
		if err := l.checkRootLink(peer); err != nil {
			return err
		}
	} else {
		if err := checkLinkName(peer); err != nil {
			return err
		}
		if !l.isOurNamespace(peerNS) {
			return fmt.Errorf("veth %s: namespace %s is not the lab's: the lab puts links only into its own namespaces", name, peerNS)
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	ctx := context.Background()
	root, err := l.links(ctx, "")
	if err != nil {
		return err
	}
	peers := root
	if peerNS != "" {
		if peers, err = l.links(ctx, peerNS); err != nil {
			return err
		}
	}
	haveName, err := claimLink(root, name, l.marker)
	if err != nil {
		return err
	}
	havePeer, err := claimLink(peers, peer, l.marker)
	if err != nil {
		return err
	}
	switch {
	case haveName && havePeer:
		return nil
	case haveName || havePeer:
		return fmt.Errorf("veth %s/%s: only one end exists; DelLink the lab's end first", name, peer)
	}
	args := []string{"link", "add", "name", name, "type", "veth", "peer", "name", peer}
	if peerNS != "" {
		args = append(args, "netns", peerNS)
	}
	if _, err := l.ip(ctx, args...); err != nil {
		return err
	}
	l.log.WithFields(map[string]any{"link": name, "peer": peer, "namespace": peerNS}).Info("veth created")
	if err := l.mark(ctx, "", name); err != nil {
		return err
	}
	if err := l.mark(ctx, peerNS, peer); err != nil {
		return err
	}
	if err := l.rootLinkNoIP(name); err != nil {
		return err
	}
	if peerNS == "" {
		if err := l.rootLinkNoIP(peer); err != nil {
			return err
		}
	}
	if _, err := l.ip(ctx, "link", "set", "dev", name, "up"); err != nil {
		return err
	}
	_, err = l.ip(ctx, nsArgs(peerNS, "link", "set", "dev", peer, "up")...)
	return err
}

// SetMaster attaches the lab's root-namespace link to the lab's bridge.
func (l *Lab) SetMaster(name, bridge string) error {
	ctx := context.Background()
	if err := l.requireOurLink(ctx, "", name); err != nil {
		return err
	}
	if err := l.requireOurLink(ctx, "", bridge); err != nil {
		return err
	}
	_, err := l.ip(ctx, "link", "set", "dev", name, "master", bridge)
	return err
}

// SetUp sets a link up: one of the lab's in the root namespace (ns ""),
// or any link inside one of the lab's namespaces.
func (l *Lab) SetUp(ns, name string) error {
	ctx := context.Background()
	if err := l.requireOurLink(ctx, ns, name); err != nil {
		return err
	}
	_, err := l.ip(ctx, nsArgs(ns, "link", "set", "dev", name, "up")...)
	return err
}

// MAC reads a link's hardware address (a link of the lab's or inside one
// of its namespaces, or any other: reading changes nothing).
func (l *Lab) MAC(ns, name string) (net.HardwareAddr, error) {
	ls, err := l.links(context.Background(), ns)
	if err != nil {
		return nil, err
	}
	k, ok := findLink(ls, name)
	if !ok {
		return nil, fmt.Errorf("link %s not found in namespace %q", name, ns)
	}
	mac, err := net.ParseMAC(k.Address)
	if err != nil {
		return nil, fmt.Errorf("link %s: address %q: %w", name, k.Address, err)
	}
	return mac, nil
}

// DelLink deletes the lab's root-namespace link name (a veth's peer goes
// with it). A link that is gone is no error; anybody else's is refused.
func (l *Lab) DelLink(name string) error {
	ctx := context.Background()
	ls, err := l.links(ctx, "")
	if err != nil {
		return err
	}
	k, ok := findLink(ls, name)
	if !ok {
		return nil
	}
	if k.Alias != l.marker {
		return fmt.Errorf("link %s %w (alias %q): the lab deletes only its own links", name, errNotOurs, k.Alias)
	}
	return l.deleteLink(ctx, name)
}

func (l *Lab) deleteLink(ctx context.Context, name string) error {
	if _, err := l.ip(ctx, "link", "del", "dev", name); err != nil {
		// A veth whose peer's namespace was just deleted goes away on its own.
		if ls, lerr := l.links(ctx, ""); lerr == nil {
			if _, still := findLink(ls, name); !still {
				return nil
			}
		}
		return err
	}
	l.log.WithField("link", name).Info("link deleted")
	return nil
}

func (l *Lab) checkRootLink(name string) error {
	if err := checkLinkName(name); err != nil {
		return err
	}
	return l.owned("link", name)
}

// mark sets the lab's marker as the alias of a link it just created.
func (l *Lab) mark(ctx context.Context, ns, name string) error {
	_, err := l.ip(ctx, nsArgs(ns, "link", "set", "dev", name, "alias", l.marker)...)
	return err
}

// requireOurLink refuses a link that is not the lab's: in the root
// namespace it must carry the marker; elsewhere the namespace must be the
// lab's and the link must exist.
func (l *Lab) requireOurLink(ctx context.Context, ns, name string) error {
	if ns != "" && !l.isOurNamespace(ns) {
		return fmt.Errorf("link %s: namespace %s is not the lab's", name, ns)
	}
	ls, err := l.links(ctx, ns)
	if err != nil {
		return err
	}
	k, ok := findLink(ls, name)
	if !ok {
		return fmt.Errorf("link %s not found in namespace %q", name, ns)
	}
	if ns == "" && k.Alias != l.marker {
		return fmt.Errorf("link %s %w (alias %q): the lab changes only its own links", name, errNotOurs, k.Alias)
	}
	return nil
}

// rootLinkNoIP keeps the root namespace's kernel off a link of the lab's
// that VPP or the bridge owns: IPv6 disabled on it (no link-local, no
// neighbour discovery), and no ARP answers from it (arp_ignore 8). The
// kernel's default weak-host model would otherwise answer ARP arriving on
// the bridge for the machine's own addresses, which the lab's namespaces
// may happen to use as well.
func (l *Lab) rootLinkNoIP(name string) error {
	for _, s := range []struct{ rel, value string }{
		{"net/ipv6/conf/" + name + "/disable_ipv6", "1"},
		{"net/ipv4/conf/" + name + "/arp_ignore", "8"},
	} {
		if err := l.writeProc("", s.rel, s.value); err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("keep the kernel off %s: %w", name, err)
		}
	}
	return nil
}

package host

import (
	"net/netip"
	"slices"
	"testing"
)

func TestInsideRefusesOutsideTheLabsNamespaces(t *testing.T) {
	l, f := fakeLab(t, map[string]string{}, "vsl2-host", "vsl2-p1")
	gw := []netip.Prefix{mustPrefix("10.244.2.1/24")}
	for desc, err := range map[string]error{
		"bridge in the root namespace":  l.AddBridgeIn("", "cbr0", gw),
		"bridge in a foreign namespace": l.AddBridgeIn("other", "cbr0", gw),
		"veth from the root namespace":  l.AddVethIn("", "veth1", "cbr0", "vsl2-p1", "eth0"),
		"veth into the root namespace":  l.AddVethIn("vsl2-host", "veth1", "cbr0", "", "eth0"),
		"veth into a foreign namespace": l.AddVethIn("vsl2-host", "veth1", "cbr0", "vsl-x", "eth0"),
		"veth with a name too long":     l.AddVethIn("vsl2-host", "a-name-far-too-long", "cbr0", "vsl2-p1", "eth0"),
	} {
		if err == nil {
			t.Errorf("%s: want a refusal", desc)
		}
	}
	if got := f.changes(); len(got) != 0 {
		t.Errorf("changed the machine: %q", got)
	}
}

func TestAddVethInBuildsABridgePort(t *testing.T) {
	l, f := fakeLab(t, map[string]string{}, "vsl2-host", "vsl2-p1")
	if err := l.AddVethIn("vsl2-host", "veth1", "cbr0", "vsl2-p1", "eth0"); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"-n vsl2-host link add name veth1 type veth peer name eth0 netns vsl2-p1",
		"-n vsl2-host link set dev veth1 master cbr0",
		"-n vsl2-host link set dev veth1 type bridge_slave hairpin on",
		"-n vsl2-host link set dev veth1 up",
		"-n vsl2-p1 link set dev eth0 up",
	}
	if got := f.changes(); !slices.Equal(got, want) {
		t.Errorf("commands:\n got %q\nwant %q", got, want)
	}
}

package host

import (
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestCheckPrefix(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		ok     bool
	}{
		{"vsl", true},
		{"lab2", true},
		{"", false},
		{"toolongpx", false},
		{"Vsl", false},
		{"v-s", false},
		{"v/s", false},
	} {
		if err := checkPrefix(tc.prefix); (err == nil) != tc.ok {
			t.Errorf("checkPrefix(%q) = %v, want ok=%v", tc.prefix, err, tc.ok)
		}
	}
}

func TestCheckLinkName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"vslbr0", true},
		{"vsl-n1-uplink0", true},    // 14 bytes
		{"vsl-n1-uplink01", true},   // 15 bytes: the kernel's maximum
		{"vsl-n1-uplink012", false}, // 16 bytes
		{"", false},
		{"vsl/x", false},
		{"vsl x", false},
		{"vsl:x", false},
		{"..", false},
	} {
		if err := checkLinkName(tc.name); (err == nil) != tc.ok {
			t.Errorf("checkLinkName(%q) = %v, want ok=%v", tc.name, err, tc.ok)
		}
	}
}

func TestLinkAndNamespaceNames(t *testing.T) {
	l, err := New(Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if n, err := l.LinkName("br0"); n != "vslbr0" || err != nil {
		t.Errorf("LinkName(br0) = %q, %v", n, err)
	}
	if _, err := l.LinkName("0123456789abc"); err == nil {
		t.Error("LinkName of 16 bytes: want an error")
	}
	if n, err := l.NamespaceName("n1-pod-a"); n != "vsl-n1-pod-a" || err != nil {
		t.Errorf("NamespaceName = %q, %v", n, err)
	}
	if _, err := New(Options{Prefix: "BAD"}); err == nil {
		t.Error("New with prefix BAD: want an error")
	}
	if _, err := New(Options{StateDir: "relative"}); err == nil {
		t.Error("New with a relative state dir: want an error")
	}
}

func TestMarkerOwner(t *testing.T) {
	for _, tc := range []struct {
		alias, prefix string
		ok            bool
	}{
		{Marker("vsl"), "vsl", true},
		{"vppsvc-lab:lab2", "lab2", true},
		{"vppsvc-lab:", "", false},
		{"", "", false},
		{"uplink to the lab", "", false},
		{"vppsvc-realvpp", "", false},
	} {
		p, ok := markerOwner(tc.alias)
		if p != tc.prefix || ok != tc.ok {
			t.Errorf("markerOwner(%q) = %q, %v; want %q, %v", tc.alias, p, ok, tc.prefix, tc.ok)
		}
	}
}

func TestSysctlPath(t *testing.T) {
	for _, tc := range []struct {
		key, path string
		ok        bool
	}{
		{"net.ipv4.ping_group_range", "net/ipv4/ping_group_range", true},
		{"net/ipv6/conf/eth0.1/accept_ra", "net/ipv6/conf/eth0.1/accept_ra", true},
		{"", "", false},
		{"../../etc/passwd", "", false},
		{"/etc/passwd", "", false},
	} {
		p, err := sysctlPath(tc.key)
		if p != tc.path || (err == nil) != tc.ok {
			t.Errorf("sysctlPath(%q) = %q, %v; want %q ok=%v", tc.key, p, err, tc.path, tc.ok)
		}
	}
}

func TestRouteArgs(t *testing.T) {
	for _, tc := range []struct {
		r    Route
		want string // "" for an error
	}{
		{Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("10.1.0.1"), Dev: "eth0", OnLink: true}, "default via 10.1.0.1 dev eth0 onlink"},
		{Route{Dst: netip.MustParsePrefix("::/0"), Via: netip.MustParseAddr("fd00::1"), Dev: "eth0"}, "default via fd00::1 dev eth0"},
		{Route{Dst: netip.MustParsePrefix("10.1.0.1/32"), Dev: "eth0"}, "10.1.0.1/32 dev eth0"},
		{Route{Dst: netip.MustParsePrefix("192.168.77.11/32"), Dev: "eth0", Local: true}, "local 192.168.77.11/32 dev eth0"},
		{Route{Dst: netip.MustParsePrefix("10.1.0.7/24"), Dev: "eth0"}, "10.1.0.0/24 dev eth0"},
		{Route{Dst: netip.MustParsePrefix("0.0.0.0/0"), Via: netip.MustParseAddr("172.30.1.1"), Dev: "eth0", Table: 90}, "default via 172.30.1.1 dev eth0 table 90"},
		{Route{Dst: netip.MustParsePrefix("10.1.0.0/24"), Via: netip.MustParseAddr("fd00::1"), Dev: "eth0"}, ""},
		{Route{Dst: netip.MustParsePrefix("10.1.0.0/24")}, ""},
		{Route{Dev: "eth0"}, ""},
	} {
		args, err := routeArgs(tc.r)
		got := strings.Join(args, " ")
		if tc.want == "" {
			if err == nil {
				t.Errorf("routeArgs(%v) = %q, want an error", tc.r, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("routeArgs(%v) = %q, %v; want %q", tc.r, got, err, tc.want)
		}
	}
}

func TestRuleArgs(t *testing.T) {
	for _, tc := range []struct {
		r    Rule
		want string // "" for an error
	}{
		{Rule{Pref: 90, To: netip.MustParseAddr("192.168.77.11"), Proto: "tcp", Ports: "30000-30999", Table: "90"},
			"pref 90 iif lo to 192.168.77.11 ipproto tcp dport 30000-30999 lookup 90"},
		{Rule{Pref: 80, To: netip.MustParseAddr("fd00:77::b"), Proto: "tcp", Ports: "30123", Table: "local"},
			"pref 80 iif lo to fd00:77::b ipproto tcp dport 30123 lookup local"},
		{Rule{Pref: 80, To: netip.MustParseAddr("fd00:77::b"), Proto: "sctp", Ports: "30123", Table: "local"}, ""},
		{Rule{To: netip.MustParseAddr("fd00:77::b"), Proto: "tcp", Ports: "30123", Table: "local"}, ""},
		{Rule{Pref: 80, Proto: "tcp", Ports: "30123", Table: "local"}, ""},
	} {
		args, err := tc.r.args()
		got := strings.Join(args, " ")
		if tc.want == "" {
			if err == nil {
				t.Errorf("args(%+v) = %q, want an error", tc.r, got)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("args(%+v) = %q, %v; want %q", tc.r, got, err, tc.want)
		}
	}
}

func TestAddressArgs(t *testing.T) {
	for _, tc := range []struct {
		ns, link, prefix, want string
	}{
		{"vsl-p", "eth0", "10.1.0.5/32", "-n vsl-p -4 addr replace 10.1.0.5/32 dev eth0"},
		{"vsl-p", "eth0", "fd00:1::5/128", "-n vsl-p -6 addr replace fd00:1::5/128 dev eth0 nodad"},
		{"", "vslx", "192.0.2.1/24", "-4 addr replace 192.0.2.1/24 dev vslx"},
	} {
		got := strings.Join(addressArgs(tc.ns, tc.link, netip.MustParsePrefix(tc.prefix)), " ")
		if got != tc.want {
			t.Errorf("addressArgs(%s %s %s) = %q, want %q", tc.ns, tc.link, tc.prefix, got, tc.want)
		}
	}
}

func TestParseNetnsListAndPids(t *testing.T) {
	got := parseNetnsList([]byte("vsl-b (id: 1)\nvsl-a\n\nother (id: 0)\n"))
	if want := []string{"vsl-b", "vsl-a", "other"}; !reflect.DeepEqual(got, want) {
		t.Errorf("parseNetnsList = %v, want %v", got, want)
	}
	pids, err := parsePids([]byte("12\n345\n"))
	if err != nil || !reflect.DeepEqual(pids, []int{12, 345}) {
		t.Errorf("parsePids = %v, %v", pids, err)
	}
	if _, err := parsePids([]byte("12\nx\n")); err == nil {
		t.Error("parsePids of a non-number: want an error")
	}
}

func TestParseLinks(t *testing.T) {
	out := `[{"ifindex":6,"link":"vslb","ifname":"vsla","address":"ba:c7:24:95:38:68","linkinfo":{"info_kind":"veth"},"ifalias":"vppsvc-lab:vsl"},
{"ifindex":4,"ifname":"eth0","address":"02:fc:00:00:00:01"}]`
	ls, err := parseLinks([]byte(out))
	if err != nil {
		t.Fatal(err)
	}
	if len(ls) != 2 || ls[0].Name != "vsla" || ls[0].Alias != "vppsvc-lab:vsl" || ls[0].Kind != "veth" || ls[1].Alias != "" || ls[1].Address != "02:fc:00:00:00:01" {
		t.Errorf("parseLinks = %+v", ls)
	}
	if ls, err := parseLinks(nil); ls != nil || err != nil {
		t.Errorf("parseLinks(empty) = %v, %v", ls, err)
	}
	if _, err := parseLinks([]byte("[{")); err == nil {
		t.Error("parseLinks of broken JSON: want an error")
	}
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

func TestInNamespaceOfAMissingNamespace(t *testing.T) {
	ran := false
	err := InNamespace("vsl-no-such-namespace", func() error { ran = true; return nil })
	if err == nil || ran || !strings.Contains(err.Error(), "vsl-no-such-namespace") {
		t.Errorf("InNamespace of a missing namespace = %v (fn ran: %v)", err, ran)
	}
	if err := InNamespace("../etc", func() error { return nil }); err == nil {
		t.Error("InNamespace(../etc): want an error")
	}
}

package host

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// fakeIP answers ip commands from canned output by their joined
// arguments and records every command; "" and no error otherwise.
type fakeIP struct {
	out   map[string]string
	calls []string
}

func (f *fakeIP) run(_ context.Context, args ...string) ([]byte, error) {
	k := strings.Join(args, " ")
	f.calls = append(f.calls, k)
	return []byte(f.out[k]), nil
}

// changes are the commands that would change the machine.
func (f *fakeIP) changes() []string {
	var out []string
	for _, c := range f.calls {
		if strings.Contains(c, " show") || strings.HasPrefix(c, "netns list") || strings.HasPrefix(c, "netns pids") {
			continue
		}
		out = append(out, c)
	}
	return out
}

func linksJSON(t *testing.T, ls ...link) string {
	t.Helper()
	type j struct {
		Name  string `json:"ifname"`
		Alias string `json:"ifalias,omitempty"`
	}
	var js []j
	for _, k := range ls {
		js = append(js, j{k.Name, k.Alias})
	}
	b, err := json.Marshal(js)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func fakeLab(t *testing.T, out map[string]string, recorded ...string) (*Lab, *fakeIP) {
	t.Helper()
	l, err := New(Options{StateDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeIP{out: out}
	l.ip = f.run
	l.writeProc = func(ns, rel, value string) error { return nil }
	for _, ns := range recorded {
		if err := l.recordNamespace(ns); err != nil {
			t.Fatal(err)
		}
	}
	return l, f
}

const rootLinks = "-j -d link show"

func TestAddBridgeClaims(t *testing.T) {
	for _, tc := range []struct {
		desc     string
		existing []link
		refuse   string // substring of the error; "" for success
		changes  []string
	}{
		{desc: "absent: created, marked, IPv6 off, up", changes: []string{
			"link add name vslbr0 type bridge", "link set dev vslbr0 alias vppsvc-lab:vsl", "link set dev vslbr0 up"}},
		{desc: "ours already: kept", existing: []link{{Name: "vslbr0", Alias: "vppsvc-lab:vsl"}}},
		{desc: "unmarked: refused", existing: []link{{Name: "vslbr0"}}, refuse: "link vslbr0 exists and is not marked"},
		{desc: "another lab's: refused", existing: []link{{Name: "vslbr0", Alias: "vppsvc-lab:other"}}, refuse: `alias "vppsvc-lab:other"`},
		{desc: "somebody's alias: refused", existing: []link{{Name: "vslbr0", Alias: "prod bridge"}}, refuse: "vslbr0"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			l, f := fakeLab(t, map[string]string{rootLinks: linksJSON(t, tc.existing...)})
			err := l.AddBridge("vslbr0")
			if tc.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refuse) || !errors.Is(err, errNotOurs) {
					t.Fatalf("AddBridge = %v, want a refusal with %q", err, tc.refuse)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := f.changes(); !reflect.DeepEqual(got, tc.changes) {
				t.Errorf("changes = %q, want %q", got, tc.changes)
			}
		})
	}
}

func TestAddBridgeRefusesForeignPrefix(t *testing.T) {
	l, f := fakeLab(t, nil)
	if err := l.AddBridge("br0"); err == nil || !strings.Contains(err.Error(), `does not start with the lab prefix "vsl"`) {
		t.Errorf("AddBridge(br0) = %v", err)
	}
	if len(f.calls) != 0 {
		t.Errorf("ran %q", f.calls)
	}
}

func TestAddVethClaims(t *testing.T) {
	for _, tc := range []struct {
		desc      string
		root, pod []link
		recorded  []string
		peerNS    string
		refuse    string
		changes   []string
	}{
		{desc: "into the lab's namespace", recorded: []string{"vsl-p"}, peerNS: "vsl-p", changes: []string{
			"link add name vslp type veth peer name eth0 netns vsl-p",
			"link set dev vslp alias vppsvc-lab:vsl", "-n vsl-p link set dev eth0 alias vppsvc-lab:vsl",
			"link set dev vslp up", "-n vsl-p link set dev eth0 up"}},
		{desc: "into a foreign namespace: refused", peerNS: "vsl-p", refuse: "namespace vsl-p is not the lab's"},
		{desc: "root end taken: refused", recorded: []string{"vsl-p"}, peerNS: "vsl-p", root: []link{{Name: "vslp"}}, refuse: "link vslp exists"},
		{desc: "both ends ours: kept", recorded: []string{"vsl-p"}, peerNS: "vsl-p",
			root: []link{{Name: "vslp", Alias: "vppsvc-lab:vsl"}}, pod: []link{{Name: "eth0", Alias: "vppsvc-lab:vsl"}}},
		{desc: "one end only: refused", recorded: []string{"vsl-p"}, peerNS: "vsl-p",
			root: []link{{Name: "vslp", Alias: "vppsvc-lab:vsl"}}, refuse: "only one end exists"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			l, f := fakeLab(t, map[string]string{rootLinks: linksJSON(t, tc.root...), "-n vsl-p " + rootLinks: linksJSON(t, tc.pod...)}, tc.recorded...)
			err := l.AddVeth("vslp", tc.peerNS, "eth0")
			if tc.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refuse) {
					t.Fatalf("AddVeth = %v, want a refusal with %q", err, tc.refuse)
				}
			} else if err != nil {
				t.Fatal(err)
			}
			if got := f.changes(); !reflect.DeepEqual(got, tc.changes) {
				t.Errorf("changes = %q, want %q", got, tc.changes)
			}
		})
	}
}

func TestAddNamespaceClaims(t *testing.T) {
	for _, tc := range []struct {
		desc     string
		list     string
		recorded []string
		refuse   string
		changes  []string
	}{
		{desc: "absent: created with lo up", list: "other\n", changes: []string{"netns add vsl-p", "-n vsl-p link set lo up"}},
		{desc: "ours: kept", list: "vsl-p (id: 3)\n", recorded: []string{"vsl-p"}},
		{desc: "no record: refused", list: "vsl-p (id: 3)\n", refuse: "namespace vsl-p exists and is not marked"},
	} {
		t.Run(tc.desc, func(t *testing.T) {
			l, f := fakeLab(t, map[string]string{"netns list": tc.list}, tc.recorded...)
			err := l.AddNamespace("vsl-p")
			if tc.refuse != "" {
				if err == nil || !strings.Contains(err.Error(), tc.refuse) {
					t.Fatalf("AddNamespace = %v, want a refusal with %q", err, tc.refuse)
				}
				if l.isOurNamespace("vsl-p") {
					t.Error("a refused namespace got a record")
				}
			} else if err != nil {
				t.Fatal(err)
			} else if !l.isOurNamespace("vsl-p") {
				t.Error("no record of the namespace")
			}
			if got := f.changes(); !reflect.DeepEqual(got, tc.changes) {
				t.Errorf("changes = %q, want %q", got, tc.changes)
			}
		})
	}
}

func TestChangesRefuseForeignObjects(t *testing.T) {
	l, f := fakeLab(t, map[string]string{rootLinks: linksJSON(t, link{Name: "vslx"}, link{Name: "vslbr0", Alias: "vppsvc-lab:vsl"})})
	for desc, err := range map[string]error{
		"DelLink":          l.DelLink("vslx"),
		"SetMaster":        l.SetMaster("vslx", "vslbr0"),
		"SetUp":            l.SetUp("", "vslx"),
		"AddAddress":       l.AddAddress("", "vslx", mustPrefix("192.0.2.1/24")),
		"DelNamespace":     l.DelNamespace("vsl-x"),
		"Sysctl":           l.Sysctl("vsl-x", "net.ipv4.ip_forward", "1"),
		"AddRoute foreign": l.AddRoute("vsl-x", Route{Dst: mustPrefix("0.0.0.0/0"), Dev: "eth0"}),
	} {
		if err == nil {
			t.Errorf("%s on a foreign object: want a refusal", desc)
		}
	}
	if got := f.changes(); len(got) != 0 {
		t.Errorf("changed the machine: %q", got)
	}
}

func TestCleanupRemovesOnlyOurs(t *testing.T) {
	root := linksJSON(t,
		link{Name: "eth0"},
		link{Name: "vslbr0", Alias: "vppsvc-lab:vsl"},
		link{Name: "vslup1", Alias: "vppsvc-lab:vsl"},
		link{Name: "vslx"},                            // our prefix, not marked
		link{Name: "vslo", Alias: "vppsvc-lab:other"}, // another lab's
		link{Name: "br9", Alias: "vppsvc-lab:vsl"},    // marked, without the prefix
	)
	l, f := fakeLab(t, map[string]string{
		rootLinks:               root,
		"netns list":            "vsl-a (id: 1)\nvsl-foreign (id: 2)\n",
		"-n vsl-a " + rootLinks: linksJSON(t, link{Name: "lo"}, link{Name: "eth0", Alias: "vppsvc-lab:vsl"}),
	}, "vsl-a", "vsl-gone")
	removed, err := l.Cleanup()
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"namespace vsl-a", "link vslbr0", "link vslup1"}
	if !reflect.DeepEqual(removed, want) {
		t.Errorf("removed %q, want %q", removed, want)
	}
	wantChanges := []string{"-n vsl-a link del dev eth0", "netns del vsl-a", "link del dev vslbr0", "link del dev vslup1"}
	if got := f.changes(); !reflect.DeepEqual(got, wantChanges) {
		t.Errorf("changes = %q, want %q", got, wantChanges)
	}
	if nss, _ := l.recordedNamespaces(); len(nss) != 0 {
		t.Errorf("records left: %v", nss)
	}
	if _, err := os.Stat(filepath.Join(l.dir)); !os.IsNotExist(err) {
		t.Errorf("state dir left: %v", err)
	}
}

func TestCleanupKillsProcessesInOurNamespaces(t *testing.T) {
	// The fake reports no process; the kill loop's parsing is what runs.
	l, f := fakeLab(t, map[string]string{"netns list": "vsl-a\n", "netns pids vsl-a": "\n"}, "vsl-a")
	if _, err := l.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if !containsString(f.calls, "netns pids vsl-a") {
		t.Errorf("calls %q: want the namespace's pids read before deleting it", f.calls)
	}
}

func containsString(s []string, v string) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

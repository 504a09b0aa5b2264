package dataplane_test

// The differential suite: one case is a sequence of binary-API calls and
// packets; everything the case observes is recorded as text. On fakevpp
// alone (make test) the text must equal the golden file recorded from a
// real VPP 25.10; with VPPSVC_TEST_VPP_SOCKET set the case runs on the
// real VPP and on fakevpp, and any difference between them, or between the
// real VPP and the golden, fails. Goldens are VPP's answers: -update
// rewrites them only from a real VPP.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"go.fd.io/govpp/api"
	interfaces "go.fd.io/govpp/binapi/interface"
	"go.fd.io/govpp/binapi/interface_types"
	"go.fd.io/govpp/binapi/memclnt"
	"go.fd.io/govpp/binapi/vpe"
	"go.fd.io/govpp/core"

	"github.com/vppsvc/vppsvc/dataplane"
	"github.com/vppsvc/vppsvc/fakevpp"
)

var update = flag.Bool("update", false, "rewrite the differential goldens from a real VPP (needs "+dataplane.SocketEnv+")")

// diffCase is one run of a differential case on one data plane.
type diffCase struct {
	t    *testing.T
	Node dataplane.Node
	Conn api.Connection
	Ctx  context.Context

	names map[uint32]string // sw_if_index → interface name, from sw_interface_dump
	out   strings.Builder
}

// Record appends an observation: label, then v rendered as stable text.
// A slice (a dump) renders one entry a line, sorted. Interface indexes
// (fields of type InterfaceIndex, or uint32 fields named …SwIfIndex)
// render as interface names, so the text does not depend on the order in
// which a data plane numbers its interfaces.
func (d *diffCase) Record(label string, v any) {
	d.RecordExcept(label, v)
}

// RecordExcept is Record leaving out the named struct fields (at any
// depth): values that differ by nature (clocks, counters, MACs, PIDs).
func (d *diffCase) RecordExcept(label string, v any, omit ...string) {
	r := renderer{d: d, omit: omit}
	fmt.Fprintf(&d.out, "# %s\n", label)
	rv := reflect.ValueOf(v)
	if rv.Kind() == reflect.Slice && rv.Type().Elem().Kind() != reflect.Uint8 {
		lines := make([]string, rv.Len())
		for i := range lines {
			lines[i] = r.value(rv.Index(i))
		}
		slices.Sort(lines)
		if len(lines) == 0 {
			lines = []string{"(none)"}
		}
		for _, l := range lines {
			fmt.Fprintf(&d.out, "  %s\n", l)
		}
		return
	}
	fmt.Fprintf(&d.out, "  %s\n", r.value(rv))
}

// Retval records the retval of a call: 0, or VPP's error number. Any
// other error (a transport failure) ends the case.
func (d *diffCase) Retval(label string, err error) {
	d.t.Helper()
	d.Record(label+" retval", retval(d.t, err))
}

func retval(t *testing.T, err error) int {
	t.Helper()
	var ve api.VPPApiError
	switch {
	case err == nil:
		return 0
	case errors.As(err, &ve):
		return int(ve)
	}
	t.Fatalf("call failed: %v", err)
	return 0
}

// Must ends the case on a setup error.
func (d *diffCase) Must(err error) {
	d.t.Helper()
	if err != nil {
		d.t.Fatal(err)
	}
}

// Sw is the sw_if_index of an interface the node made.
func (d *diffCase) Sw(name string) interface_types.InterfaceIndex {
	d.t.Helper()
	i, ok := d.Node.InterfaceIndex(name)
	if !ok {
		d.t.Fatalf("no interface %s", name)
	}
	return interface_types.InterfaceIndex(i)
}

// Trace sends p and records what left: the verdict, the egress, the
// packet's addresses and ports and whether the reply came back. Drop
// reasons and graph steps differ by nature between the data planes and
// are not recorded.
func (d *diffCase) Trace(label string, p fakevpp.Packet) fakevpp.Trace {
	tr := d.Node.Trace(p)
	s := string(tr.Verdict)
	if tr.Verdict == fakevpp.Forward {
		s = fmt.Sprintf("forward via %s as %s reply ok %t", tr.Egress, tr.Out, tr.ReplyOK)
	}
	fmt.Fprintf(&d.out, "# %s: %s\n  %s\n", label, p, s)
	if testing.Verbose() {
		d.t.Logf("%s: %s (%s)\n%s", label, s, tr.Reason, strings.Join(tr.Steps, "\n"))
	}
	return tr
}

// ifName names an interface index, dumping VPP's interfaces when the
// index is new to the case.
func (d *diffCase) ifName(sw uint32) string {
	if sw == ^uint32(0) {
		return "~0"
	}
	if n, ok := d.names[sw]; ok {
		return n
	}
	// Names already known stay: a case that deletes an interface marks
	// its index (see forgetInterface) so that what VPP still reports on
	// it renders stably.
	if d.names == nil {
		d.names = map[uint32]string{}
	}
	ifs, err := dumpAll[*interfaces.SwInterfaceDetails](d, &interfaces.SwInterfaceDump{SwIfIndex: ^interface_types.InterfaceIndex(0)})
	if err != nil {
		d.t.Fatalf("sw_interface_dump: %v", err)
	}
	for _, i := range ifs {
		d.names[uint32(i.SwIfIndex)] = i.InterfaceName
	}
	if n, ok := d.names[sw]; ok {
		return n
	}
	return fmt.Sprintf("sw%d?", sw)
}

// forgetInterface records that the interface at sw was deleted: the index
// renders as "<name> (deleted)" until an interface is created there again
// (call learnInterface then).
func (d *diffCase) forgetInterface(sw uint32) {
	name := d.ifName(sw)
	d.names[sw] = name + " (deleted)"
}

// learnInterface drops what the case knew of index sw, so that the next
// rendering asks VPP (an interface created at a reused index).
func (d *diffCase) learnInterface(sw uint32) { delete(d.names, sw) }

// dumpAll sends a dump request on the case's connection and returns its
// details.
func dumpAll[T api.Message](d *diffCase, req api.Message) ([]T, error) {
	d.t.Helper()
	s, err := d.Conn.NewStream(d.Ctx)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	if err := s.SendMsg(req); err != nil {
		return nil, err
	}
	if err := s.SendMsg(&memclnt.ControlPing{}); err != nil {
		return nil, err
	}
	var out []T
	for {
		m, err := s.RecvMsg()
		if err != nil {
			return out, err
		}
		if t, ok := m.(T); ok {
			out = append(out, t)
			continue
		}
		if _, ok := m.(*memclnt.ControlPingReply); ok {
			return out, nil
		}
		return out, fmt.Errorf("unexpected %s in a %s", m.GetMessageName(), req.GetMessageName())
	}
}

// Dump records a dump's details (sorted, see Record), leaving out omit.
func Dump[T api.Message](d *diffCase, label string, req api.Message, omit ...string) []T {
	d.t.Helper()
	out, err := dumpAll[T](d, req)
	if err != nil {
		d.t.Fatalf("%s: %v", req.GetMessageName(), err)
	}
	d.RecordExcept(label, out, omit...)
	return out
}

// renderer turns a reply or detail into one stable line.
type renderer struct {
	d    *diffCase
	omit []string
}

var (
	stringerType = reflect.TypeOf((*fmt.Stringer)(nil)).Elem()
	ifIndexType  = reflect.TypeOf(interface_types.InterfaceIndex(0))
)

func (r renderer) value(v reflect.Value) string {
	if !v.IsValid() {
		return "<nil>"
	}
	if v.Type() == ifIndexType {
		return r.d.ifName(uint32(v.Uint()))
	}
	if v.Kind() != reflect.Struct && v.Kind() != reflect.Pointer && v.Type().Implements(stringerType) {
		return v.Interface().(fmt.Stringer).String()
	}
	if isAddressLike(v) {
		return v.Interface().(fmt.Stringer).String()
	}
	switch v.Kind() {
	case reflect.Pointer:
		if v.IsNil() {
			return "<nil>"
		}
		return r.value(v.Elem())
	case reflect.Struct:
		var parts []string
		for i := 0; i < v.NumField(); i++ {
			f := v.Type().Field(i)
			if !f.IsExported() || slices.Contains(r.omit, f.Name) {
				continue
			}
			fv := v.Field(i)
			s := r.value(fv)
			if strings.HasSuffix(f.Name, "SwIfIndex") && fv.Kind() == reflect.Uint32 {
				s = r.d.ifName(uint32(fv.Uint()))
			}
			parts = append(parts, f.Name+"="+s)
		}
		return "{" + strings.Join(parts, " ") + "}"
	case reflect.Slice, reflect.Array:
		if v.Type().Elem().Kind() == reflect.Uint8 && v.Kind() == reflect.Slice {
			return fmt.Sprintf("%x", v.Bytes())
		}
		parts := make([]string, v.Len())
		for i := range parts {
			parts[i] = r.value(v.Index(i))
		}
		return "[" + strings.Join(parts, " ") + "]"
	case reflect.String:
		return fmt.Sprintf("%q", v.String())
	}
	return fmt.Sprint(v.Interface())
}

// isAddressLike tells the binapi address and prefix types, whose String
// is the readable form (unions print as bytes otherwise).
func isAddressLike(v reflect.Value) bool {
	if !v.Type().Implements(stringerType) {
		return false
	}
	switch v.Type().Name() {
	case "Address", "Prefix", "AddressWithPrefix", "IP4Address", "IP6Address", "IP4Prefix", "IP6Prefix", "MacAddress":
		return true
	}
	return false
}

// A golden starts with its provenance: the VPP build it was recorded on
// (show_version's version and build date) and the API messages the case
// sent, one line each. The body that follows is what the case recorded.
// -update writes both from the real VPP; every run checks that its data
// plane sent the same messages, and TestGoldenProvenance that every
// message fakevpp serves has a case and every golden its header.
const (
	provRecorded = "# recorded on VPP "
	provMessages = "# messages:"
)

// provenance is a golden's header.
type provenance struct {
	version, built string
	messages       []string
}

func (p provenance) String() string {
	return fmt.Sprintf("%s%s built %s\n%s %s\n", provRecorded, p.version, p.built, provMessages, strings.Join(p.messages, " "))
}

// splitGolden separates a golden's header from its body; ok is false when
// the header is missing or malformed.
func splitGolden(text string) (p provenance, body string, ok bool) {
	first, rest, _ := strings.Cut(text, "\n")
	second, body, _ := strings.Cut(rest, "\n")
	vb, found := strings.CutPrefix(first, provRecorded)
	if !found {
		return p, text, false
	}
	p.version, p.built, found = strings.Cut(vb, " built ")
	if !found || p.version == "" {
		return p, text, false
	}
	msgs, found := strings.CutPrefix(second, provMessages)
	if !found {
		return p, text, false
	}
	p.messages = strings.Fields(msgs)
	return p, body, true
}

// runDifferential runs one case (see the file comment).
func runDifferential(t *testing.T, name string, fn func(d *diffCase)) {
	t.Helper()
	t.Run(name, func(t *testing.T) {
		golden := filepath.Join("testdata", "differential", name+".golden")
		var real caseRun
		if dataplane.OnRealVPP() {
			start := time.Now()
			real = runOn(t, dataplane.ForTest(t, 1), fn)
			t.Logf("real VPP: %v", time.Since(start).Round(time.Millisecond))
			if t.Failed() {
				return
			}
		} else if *update {
			t.Fatalf("-update rewrites goldens from a real VPP only: set %s", dataplane.SocketEnv)
		}
		fake := runOn(t, dataplane.NewFake(1), fn)
		if t.Failed() {
			return
		}
		if *update {
			if err := os.MkdirAll(filepath.Dir(golden), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(golden, []byte(real.prov.String()+real.text), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		raw, err := os.ReadFile(golden)
		if err != nil {
			t.Fatalf("%v (record it from a real VPP with -update)", err)
		}
		prov, want, ok := splitGolden(string(raw))
		if !ok {
			t.Fatalf("%s has no provenance header (%q, %q): record it from a real VPP with -update", golden, provRecorded, provMessages)
		}
		sent := func(who string, r caseRun) {
			if !slices.Equal(r.prov.messages, prov.messages) {
				t.Errorf("%s sent %v; %s records %v", who, r.prov.messages, golden, prov.messages)
			}
		}
		sent("fakevpp", fake)
		if dataplane.OnRealVPP() {
			sent("the real VPP's case", real)
			if d := diffText(want, real.text); d != "" {
				t.Errorf("real VPP differs from %s (-golden +real):\n%s", golden, d)
			}
			if d := diffText(real.text, fake.text); d != "" {
				t.Errorf("fakevpp differs from the real VPP (-real +fake):\n%s", d)
			}
			return
		}
		if d := diffText(want, fake.text); d != "" {
			t.Errorf("fakevpp differs from the real VPP's %s (-real +fake):\n%s", golden, d)
		}
	})
}

// caseRun is what a case recorded on one data plane, with the messages it
// sent and, on a real VPP, the build it ran on.
type caseRun struct {
	text string
	prov provenance
}

// runOn runs fn on n and returns what it recorded.
func runOn(t *testing.T, n dataplane.Node, fn func(d *diffCase)) caseRun {
	t.Helper()
	c, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	conn, err := core.Connect(n.Adapter())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Disconnect()
	n.ResetCalls()
	d := &diffCase{t: t, Node: n, Conn: conn, Ctx: c}
	fn(d)
	r := caseRun{text: d.out.String()}
	for m, k := range n.Calls() {
		if k > 0 && m != controlPing {
			r.prov.messages = append(r.prov.messages, m)
		}
	}
	slices.Sort(r.prov.messages)
	if n.Real() && !t.Failed() {
		v, err := vpe.NewServiceClient(conn).ShowVersion(c, &vpe.ShowVersion{})
		if err != nil {
			t.Fatalf("show_version: %v", err)
		}
		r.prov.version, r.prov.built = v.Version, v.BuildDate
	}
	return r
}

// controlPing is the message every dump stream ends with; govpp sends it
// on its own, so it is no case's.
var controlPing = (&memclnt.ControlPing{}).GetMessageName()

// diffText is a line diff of a and b ("" when equal): the lines of each
// that the other lacks, in order, around their longest common subsequence.
func diffText(a, b string) string {
	if a == b {
		return ""
	}
	x, y := strings.Split(a, "\n"), strings.Split(b, "\n")
	lcs := make([][]int, len(x)+1)
	for i := range lcs {
		lcs[i] = make([]int, len(y)+1)
	}
	for i := len(x) - 1; i >= 0; i-- {
		for j := len(y) - 1; j >= 0; j-- {
			if x[i] == y[j] {
				lcs[i][j] = lcs[i+1][j+1] + 1
			} else {
				lcs[i][j] = max(lcs[i+1][j], lcs[i][j+1])
			}
		}
	}
	var out strings.Builder
	i, j := 0, 0
	for i < len(x) || j < len(y) {
		switch {
		case i < len(x) && j < len(y) && x[i] == y[j]:
			if strings.HasPrefix(x[i], "#") {
				fmt.Fprintf(&out, " %s\n", x[i])
			}
			i, j = i+1, j+1
		case i < len(x) && (j == len(y) || lcs[i+1][j] >= lcs[i][j+1]):
			fmt.Fprintf(&out, "-%s\n", x[i])
			i++
		default:
			fmt.Fprintf(&out, "+%s\n", y[j])
			j++
		}
	}
	return out.String()
}

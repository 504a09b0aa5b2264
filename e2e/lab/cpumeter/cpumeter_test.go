package cpumeter

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		name, in      string
		busy, softirq time.Duration
		bad           bool
	}{
		// user nice system idle iowait irq softirq steal guest guest_nice
		{name: "sums the busy fields", in: "cpu  100 20 30 999 7 1 2 3 0 0\ncpu0 1 2 3 4 5 6 7 8 9 10\n", busy: 1560 * time.Millisecond, softirq: 30 * time.Millisecond},
		{name: "idle only", in: "cpu  0 0 0 500 0 0 0 0 0 0\n", busy: 0, softirq: 0},
		{name: "not the total", in: "cpu0 1 2 3 4 5 6 7 8\n", bad: true},
		{name: "too short", in: "cpu 1 2 3\n", bad: true},
		{name: "not a number", in: "cpu 1 2 x 4 5 6 7 8 9 10\n", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseStat([]byte(tc.in))
			if (err != nil) != tc.bad {
				t.Fatalf("error %v, want error %t", err, tc.bad)
			}
			if !tc.bad && (got.Busy != tc.busy || got.Softirq != tc.softirq) {
				t.Errorf("%+v, want busy %s softirq %s", got, tc.busy, tc.softirq)
			}
		})
	}
	a, b := Stat{Busy: 5 * time.Second, Softirq: time.Second}, Stat{Busy: 2 * time.Second, Softirq: 300 * time.Millisecond}
	if d := a.Sub(b); d.Busy != 3*time.Second || d.Softirq != 700*time.Millisecond {
		t.Errorf("Sub: %+v", d)
	}
}

func TestParseProcessCPU(t *testing.T) {
	for _, tc := range []struct {
		name, in string
		want     time.Duration
		bad      bool
	}{
		{name: "utime+stime", in: "42 (vpp_main) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0 100 0 0", want: 3 * time.Second},
		{name: "a name with spaces and parentheses", in: "7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0 1 0 0", want: 30 * time.Millisecond},
		{name: "no name", in: "7 R 1 7", bad: true},
		{name: "cut short", in: "7 (x) R 1 7 7 0", bad: true},
		{name: "not a number", in: "7 (x) R 1 7 7 0 -1 0 0 0 0 0 u s 0 0 20 0 1 0 1 0 0", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseProcessCPU([]byte(tc.in))
			if (err != nil) != tc.bad {
				t.Fatalf("error %v, want error %t", err, tc.bad)
			}
			if got != tc.want {
				t.Errorf("%s, want %s", got, tc.want)
			}
		})
	}
}

// sample is one perf script sample: its pid and its call chain, leaf first.
func sample(pid string, frames ...string) string {
	var b strings.Builder
	// As perf script writes it: the pid right-aligned in five columns.
	fmt.Fprintf(&b, "%5s/%-5s \n", pid, pid)
	for _, f := range frames {
		b.WriteString("\tffffffff81000000 " + f + "\n")
	}
	return b.String() + "\n"
}

func TestClassifyLeaves(t *testing.T) {
	in := sample("100", "nat44_ed_in2out_node_fn", "vlib_main") + sample("100", "nat44_ed_in2out_node_fn", "vlib_main") +
		sample("100", "veth_xmit", "tpacket_snd") + sample("0", "nft_do_chain", "net_rx_action") + sample("300", "main.loop")
	// sample writes kernel-looking addresses; a user-space leaf has a short one.
	in = strings.Replace(in, "\tffffffff81000000 nat44_ed_in2out_node_fn", "\t7f0000001000 nat44_ed_in2out_node_fn", -1)
	p, err := Classify(strings.NewReader(in), 500, map[int]bool{100: true})
	if err != nil {
		t.Fatal(err)
	}
	if p.VPP != 3 || p.VPPKernel != 1 || p.Softirq != 1 {
		t.Errorf("%+v: want 3 VPP samples, 1 of them in the kernel, 1 softirq", p)
	}
	if got, want := p.TopLeaves(2), []string{"vpp nat44_ed_in2out_node_fn 50%", "softirq nft_do_chain 25%"}; !slices.Equal(got, want) {
		t.Errorf("top leaves %v, want %v", got, want)
	}
}

func TestClassify(t *testing.T) {
	vpp := map[int]bool{100: true}
	for _, tc := range []struct {
		name string
		in   string
		want Profile
		bad  bool
	}{
		{name: "a VPP sample in its own code", in: sample("100", "nat44_ed_out2in_node_fn", "vlib_main"), want: Profile{Samples: 1, VPP: 1}},
		{name: "a VPP sample in the kernel's veth transmit", in: sample("100", "veth_xmit", "dev_queue_xmit", "tpacket_snd"), want: Profile{Samples: 1, VPP: 1}},
		{name: "forwarding in softirq on the idle task", in: sample("0", "nft_do_chain", "br_handle_frame", "__netif_receive_skb_core", "process_backlog", "net_rx_action", "handle_softirqs"), want: Profile{Samples: 1, Softirq: 1}},
		{name: "forwarding in softirq on a client's syscall", in: sample("300", "nf_conntrack_in", "__netif_receive_skb_one_core", "process_backlog", "net_rx_action", "do_softirq", "__dev_queue_xmit", "tcp_sendmsg"), want: Profile{Samples: 1, Softirq: 1}},
		{name: "the endpoint's TCP input is not the data plane", in: sample("0", "tcp_rcv_established", "tcp_v4_rcv", "ip_local_deliver", "__netif_receive_skb_one_core", "net_rx_action"), want: Profile{Samples: 1, EndpointTCP: 1}},
		{name: "nor on VPP's task", in: sample("100", "tcp_v6_rcv", "net_rx_action", "do_softirq", "veth_xmit"), want: Profile{Samples: 1, EndpointTCP: 1}},
		{name: "idle", in: sample("0", "default_idle", "do_idle"), want: Profile{Samples: 1, Idle: 1}},
		{name: "an idle sample without a chain", in: sample("0"), want: Profile{Samples: 1, Idle: 1}},
		{name: "a client's user code", in: sample("300", "main.loop"), want: Profile{Samples: 1}},
		{name: "a symbol with an offset", in: sample("300", "net_rx_action+0x1f"), want: Profile{Samples: 1, Softirq: 1}},
		{name: "several", in: sample("100", "vlib_main") + sample("0", "default_idle") + sample("0", "net_rx_action") + sample("5", "x"), want: Profile{Samples: 4, VPP: 1, Softirq: 1, Idle: 1}},
		{name: "garbage header skipped", in: "not-a-sample\n\tffff x\n\n" + sample("100", "vlib_main"), want: Profile{Samples: 1, VPP: 1}},
		{name: "a five-digit pid, unpadded", in: sample("22727", "x") + sample("0", "default_idle"), want: Profile{Samples: 2, Idle: 1}},
		{name: "no samples", in: "", bad: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Classify(strings.NewReader(tc.in), 500, vpp)
			if (err != nil) != tc.bad {
				t.Fatalf("error %v, want error %t", err, tc.bad)
			}
			tc.want.Freq = 500
			leaves := got.Leaves
			got.Leaves, got.OtherLeaves, got.VPPKernel = nil, nil, 0
			if !tc.bad && !reflect.DeepEqual(got, tc.want) {
				t.Errorf("%+v, want %+v", got, tc.want)
			}
			n := 0
			for _, v := range leaves {
				n += v
			}
			if !tc.bad && n != tc.want.VPP+tc.want.Softirq {
				t.Errorf("leaves %v: %d samples, want the data plane's %d", leaves, n, tc.want.VPP+tc.want.Softirq)
			}
		})
	}
	p := Profile{Freq: 500, Samples: 1000, VPP: 100, Softirq: 150, Idle: 600}
	if p.DataPlane() != 500*time.Millisecond || p.Busy() != 800*time.Millisecond {
		t.Errorf("data plane %s busy %s, want 500ms and 800ms", p.DataPlane(), p.Busy())
	}
}

func TestParseLost(t *testing.T) {
	stats := []byte(`
Aggregated stats:
           TOTAL events:       2828
          SAMPLE events:       1998  (70.7%)
            LOST events:          3  ( 0.1%)
    LOST_SAMPLES events:        120  ( 4.2%)
cpu-clock:pppH stats:
          SAMPLE events:       1998
`)
	if r, s := parseLost(stats); r != 3 || s != 120 {
		t.Errorf("parseLost = %d records, %d samples; want 3, 120", r, s)
	}
	if r, s := parseLost([]byte("          SAMPLE events:       1998\n")); r != 0 || s != 0 {
		t.Errorf("nothing lost: parseLost = %d, %d", r, s)
	}
}

package realvpp

import (
	"math"
	"testing"
)

// A "show runtime" of VPP 25.10 after a burst: internal nodes with
// vectors, processes (quoted states of two words, one cut short).
const showRuntime = `Time 29.6, 10 sec internal node vector rate 250.00 loops/sec 1040811.56
  vector rates in 3.3784e2, out 3.3784e2, drop 0.0000e0, punt 0.0000e0
             Name                 State         Calls          Vectors        Suspends         Clocks       Vectors/Call  
acl-plugin-fa-cleaner-process "event wait"               0               0               1          1.19e4            0.00
deleted-426                   "not started               1               0               0          2.64e4            0.00
ethernet-input                   active                 40           10000               0          1.71e1          250.00
ip4-input                        active                 40           10000               0          3.84e1          250.00
nat44-ed-out2in-slowpath         active                 40           10000               0          1.34e3          250.00
pg-input                         polling               41           10000               0          7.81e1          243.90
unix-cli-process-0              running                  3               0               7          2.53e8            0.00
uplink0-tx                       active                 40           10000               0          1.05e1          250.00
`

func TestParseRuntime(t *testing.T) {
	nodes, err := ParseRuntime(showRuntime)
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 8 {
		t.Fatalf("%d nodes, want 8: %+v", len(nodes), nodes)
	}
	want := RuntimeNode{Name: "nat44-ed-out2in-slowpath", State: "active", Calls: 40, Vectors: 10000, Clocks: 1340, VectorsPerCall: 250}
	if nodes[4] != want {
		t.Errorf("got %+v, want %+v", nodes[4], want)
	}
	if nodes[0].State != "event wait" || nodes[1].State != "not started" || nodes[0].Vectors != 0 {
		t.Errorf("processes: %+v %+v", nodes[0], nodes[1])
	}
	// Processes handled no packet and count nothing.
	got := ClocksPerPacket(nodes, 10000, nil)
	if w := 17.1 + 38.4 + 1340 + 78.1 + 10.5; math.Abs(got-w) > 1e-6 {
		t.Errorf("clocks/packet %v, want %v", got, w)
	}
	got = ClocksPerPacket(nodes, 10000, func(name string) bool { return name == "pg-input" || name == "uplink0-tx" })
	if w := 17.1 + 38.4 + 1340; math.Abs(got-w) > 1e-6 {
		t.Errorf("clocks/packet without pg nodes %v, want %v", got, w)
	}
	if _, err := ParseRuntime("Time 1.0, 10 sec internal node vector rate 0.00\n"); err == nil {
		t.Error("no node lines parsed without an error")
	}
}

func TestStreamSent(t *testing.T) {
	show := `Name                     Enabled        Count     Parameters
vppsvcburst7                 No         10000     limit 10000, rate 0.00e0, size 54-54, buffer-size 54, 
vppsvcburst8                 Yes          256     limit 10000, rate 0.00e0, size 54-54, buffer-size 54, 
`
	if sent, done := streamSent(show, "vppsvcburst7"); sent != 10000 || !done {
		t.Errorf("burst7: %d %t, want 10000 true", sent, done)
	}
	if sent, done := streamSent(show, "vppsvcburst8"); sent != 256 || done {
		t.Errorf("burst8: %d %t, want 256 false", sent, done)
	}
	if _, done := streamSent(show, "other"); done {
		t.Error("unknown stream done")
	}
}

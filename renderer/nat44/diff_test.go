package nat44

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestDiffAdd(t *testing.T) {
	lb := func(affinity uint32, locals ...string) *vppcfg.NAT44LBMapping {
		m := &vppcfg.NAT44LBMapping{External: ap("10.96.0.1:80"), Protocol: tcp, Affinity: affinity, Out2InOnly: true}
		for _, l := range locals {
			m.Locals = append(m.Locals, loc(l, 1))
		}
		return m
	}
	static := &vppcfg.NAT44StaticMapping{External: ap("10.96.0.1:80"), Protocol: tcp, Local: ap("10.1.2.2:80"), Out2InOnly: true}
	owner := model.ServiceID{Namespace: "default", Name: "x"}
	tests := []struct {
		name                     string
		before, after            vppcfg.Item
		puts, deletes, recreates int
	}{
		{"nothing", nil, nil, 0, 0, 0},
		{"create", nil, lb(0, "10.1.2.2:80", "10.1.2.3:80"), 1, 0, 0},
		{"delete", static, nil, 0, 1, 0},
		{"equal", lb(0, "10.1.2.2:80", "10.1.2.3:80"), lb(0, "10.1.2.2:80", "10.1.2.3:80"), 0, 0, 0},
		{"static to LB", static, lb(0, "10.1.2.2:80", "10.1.2.3:80"), 1, 1, 0},
		{"local removed without affinity", lb(0, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), lb(0, "10.1.2.2:80", "10.1.2.3:80"), 1, 0, 0},
		{"local added with affinity", lb(60, "10.1.2.2:80", "10.1.2.3:80"), lb(60, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), 1, 0, 0},
		{"local removed with affinity", lb(60, "10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), lb(60, "10.1.2.2:80", "10.1.2.3:80"), 1, 0, 1},
		{"local replaced with affinity", lb(60, "10.1.2.2:80", "10.1.2.3:80"), lb(60, "10.1.2.2:80", "10.1.2.4:80"), 1, 0, 1},
		{"affinity changed (the layer re-creates)", lb(60, "10.1.2.2:80", "10.1.2.3:80"), lb(30, "10.1.2.2:80"), 1, 0, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d diff
			d.add(tt.before, tt.after, owner)
			if len(d.puts) != tt.puts || len(d.deletes) != tt.deletes || len(d.recreate) != tt.recreates {
				t.Fatalf("puts %d deletes %d recreates %d, want %d %d %d", len(d.puts), len(d.deletes), len(d.recreate), tt.puts, tt.deletes, tt.recreates)
			}
			for _, it := range d.puts {
				if d.owners[it.Key()] != owner {
					t.Fatalf("put %s not attributed to %s", it.Key(), owner)
				}
			}
		})
	}
}

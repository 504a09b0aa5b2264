package renderer

import (
	"testing"

	"github.com/vppsvc/vppsvc/model"
	"github.com/vppsvc/vppsvc/vppcfg"
)

func TestDiffAdd(t *testing.T) {
	tcp := vppcfg.ProtoTCP
	lb := func(locals ...string) *vppcfg.NAT44LBMapping {
		m := &vppcfg.NAT44LBMapping{External: ap("10.96.0.1:80"), Protocol: tcp, Out2InOnly: true}
		for _, l := range locals {
			m.Locals = append(m.Locals, vppcfg.NAT44LBLocal{Addr: ap(l), Probability: 1})
		}
		return m
	}
	static := &vppcfg.NAT44StaticMapping{External: ap("10.96.0.1:80"), Protocol: tcp, Local: ap("10.1.2.2:80"), Out2InOnly: true}
	owner := model.ServiceID{Namespace: "default", Name: "x"}
	claim := lb().Key()
	tests := []struct {
		name          string
		before, after vppcfg.Item
		puts, deletes int
	}{
		{"nothing", nil, nil, 0, 0},
		{"create", nil, lb("10.1.2.2:80", "10.1.2.3:80"), 1, 0},
		{"delete", static, nil, 0, 1},
		{"equal", lb("10.1.2.2:80", "10.1.2.3:80"), lb("10.1.2.2:80", "10.1.2.3:80"), 0, 0},
		{"another key under one claim: delete and put", static, lb("10.1.2.2:80", "10.1.2.3:80"), 1, 1},
		{"changed: put", lb("10.1.2.2:80", "10.1.2.3:80"), lb("10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), 1, 0},
		{"shrunk: put (the layer decides how)", lb("10.1.2.2:80", "10.1.2.3:80", "10.1.2.4:80"), lb("10.1.2.2:80", "10.1.2.3:80"), 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var d diff
			d.add(tt.before, tt.after, claim, owner)
			if len(d.puts) != tt.puts || len(d.deletes) != tt.deletes {
				t.Fatalf("puts %d deletes %d, want %d %d", len(d.puts), len(d.deletes), tt.puts, tt.deletes)
			}
			for i, it := range d.puts {
				if d.putFor[i] != owner {
					t.Fatalf("put %s not attributed to %s", it.Key(), owner)
				}
				if d.putKeys[i] != claim {
					t.Fatalf("put %s with key %s, want its claim %s", it.Key(), d.putKeys[i], claim)
				}
			}
			for i, k := range d.deletes {
				if d.delFor[i] != owner {
					t.Fatalf("delete %s not attributed to %s", k, owner)
				}
			}
		})
	}
}

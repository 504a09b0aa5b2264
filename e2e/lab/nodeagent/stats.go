package nodeagent

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"time"
)

// Stats is what a node agent reports about itself in its directory
// (stats.json, rewritten every half second): what it and the vppsvc it
// embeds have sent to VPP since it started. The lab's restart tests read
// it: a restarted agent over a configured VPP must send no change.
type Stats struct {
	Written time.Time `json:"written"`
	// VPPSvcCalls are vppsvc's VPP API calls by message (dumps included).
	VPPSvcCalls map[string]uint64 `json:"vppsvcCalls"`
	// CNIChanges are the node agent's own changing requests by message.
	CNIChanges map[string]int `json:"cniChanges"`
	// Converged is vppsvc's own verdict: VPP holds every desired item.
	Converged bool `json:"converged"`
}

// StatsFile is where node's agent writes its Stats.
func StatsFile(stateDir, node string) string { return filepath.Join(Dir(stateDir, node), "stats.json") }

// ReadStats reads node's agent's latest Stats.
func ReadStats(stateDir, node string) (Stats, error) {
	var s Stats
	b, err := os.ReadFile(StatsFile(stateDir, node))
	if err != nil {
		return s, err
	}
	return s, json.Unmarshal(b, &s)
}

func (n *nodeAgent) writeStats(ctx context.Context) {
	t := time.NewTicker(500 * time.Millisecond)
	defer t.Stop()
	for {
		s := Stats{Written: time.Now(), VPPSvcCalls: map[string]uint64{}, CNIChanges: n.client().Changes(), Converged: n.svc.Converged()}
		for _, c := range n.svc.Driver.CallStats() {
			s.VPPSvcCalls[c.Msg] = c.Calls
		}
		if b, err := json.Marshal(s); err == nil {
			tmp := StatsFile(n.opts.StateDir, n.opts.Node.Name) + ".tmp"
			if os.WriteFile(tmp, b, 0o644) == nil {
				_ = os.Rename(tmp, StatsFile(n.opts.StateDir, n.opts.Node.Name))
			}
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

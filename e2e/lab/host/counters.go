package host

import (
	"encoding/json"
	"fmt"
	"os/exec"
)

// Packets is the number of packets the link name has received and sent
// in the namespace ns, from the kernel's 64-bit counters. It reads and
// changes nothing of the lab's, so it takes any namespace.
func Packets(ns, name string) (uint64, error) {
	out, err := exec.Command("ip", "-n", ns, "-s", "-j", "link", "show", "dev", name).Output()
	if err != nil {
		return 0, fmt.Errorf("counters of %s in %s: %w", name, ns, err)
	}
	var links []struct {
		Stats struct {
			RX struct{ Packets uint64 } `json:"rx"`
			TX struct{ Packets uint64 } `json:"tx"`
		} `json:"stats64"`
	}
	if err := json.Unmarshal(out, &links); err != nil || len(links) != 1 {
		return 0, fmt.Errorf("counters of %s in %s: %v (%s)", name, ns, err, out)
	}
	return links[0].Stats.RX.Packets + links[0].Stats.TX.Packets, nil
}

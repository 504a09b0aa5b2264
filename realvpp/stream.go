package realvpp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"go.fd.io/govpp/binapi/pg"
)

// Packets enter VPP as packet-generator streams read from pcap files: one
// packet for a trace, many for a burst.

// streamTimeout bounds the wait for VPP to send one stream.
const streamTimeout = 60 * time.Second

// sendStream creates stream name from file on rx, enables it and waits
// until it has sent want packets; the graph runs each frame to completion
// in the same dispatch, so they have all crossed VPP then. With traced,
// VPP's packet trace is armed for them. Called with mu held.
func (n *Node) sendStream(rx *pgIface, name, file string, want int, traced bool) error {
	cmds := []string{"clear trace"}
	if traced {
		cmds = append(cmds, fmt.Sprintf("trace add pg-input %d", want))
	}
	cmds = append(cmds, fmt.Sprintf("packet-generator new pcap %s source pg%d name %s", file, rx.id, name))
	for _, cmd := range cmds {
		if out, err := n.CLI(cmd); err != nil || strings.TrimSpace(out) != "" {
			return fmt.Errorf("%s: %v %s", cmd, err, strings.TrimSpace(out))
		}
	}
	defer n.CLI("packet-generator delete " + name)
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	_, err := pg.NewServiceClient(n.conn).PgEnableDisable(ctx, &pg.PgEnableDisable{IsEnabled: true, StreamName: name})
	cancel()
	if err != nil {
		return fmt.Errorf("enable stream: %w", err)
	}
	deadline := time.Now().Add(streamTimeout)
	for {
		out, err := n.CLI("show packet-generator")
		if err != nil {
			return err
		}
		if sent, done := streamSent(out, name); done && sent >= want {
			return nil
		} else if done {
			return fmt.Errorf("stream %s stopped after %d of %d packets", name, sent, want)
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("VPP did not send %d packets within %s", want, streamTimeout)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// streamSent reads stream name's line of "show packet-generator": the
// packets it has sent, and whether it is done (disabled after sending).
func streamSent(show, name string) (sent int, done bool) {
	for _, line := range strings.Split(show, "\n") {
		f := strings.Fields(line)
		if len(f) >= 3 && f[0] == name {
			sent, _ = strconv.Atoi(f[2])
			return sent, f[1] == "No" && sent >= 1
		}
	}
	return 0, false
}

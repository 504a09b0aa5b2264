package netexec

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"time"
)

// Throughput is measured with iperf3 (the Debian package) rather than a Go client: it is the
// tool readers know, and it reports retransmits and both ends' view of one stream.
//
// CommandFunc builds a command to run somewhere: the lab's runs it inside a namespace (for
// example by prefixing "ip netns exec <ns>"), tests run it plainly with exec.CommandContext.
type CommandFunc func(ctx context.Context, name string, args ...string) *exec.Cmd

// Iperf3Path is the iperf3 the wrapper runs.
var Iperf3Path = "/usr/bin/iperf3"

// MaxIperfDuration bounds one stream's run; iperfStartTimeout bounds the server's start and
// iperfSlack the client's exit after its run.
const (
	MaxIperfDuration  = 60 * time.Second
	iperfStartTimeout = 5 * time.Second
	iperfSlack        = 20 * time.Second
)

// IperfResult is one TCP stream's throughput: what the receiver got (the figure to quote),
// what the sender sent and how many segments it retransmitted.
type IperfResult struct {
	ReceivedBitsPerSecond float64
	SentBitsPerSecond     float64
	Retransmits           int
	Seconds               float64
}

// Iperf3 runs "iperf3 -s -1" through server, waits until it listens, runs "iperf3 -c
// serverIP -t duration -J" through client, and returns the parsed JSON. The server serves
// that one client and exits; it is killed if it has not when Iperf3 returns.
func Iperf3(ctx context.Context, server, client CommandFunc, serverIP string, port int, duration time.Duration) (IperfResult, error) {
	if duration < time.Second || duration > MaxIperfDuration {
		return IperfResult{}, fmt.Errorf("netexec: iperf3 duration %s, want 1s..%s", duration, MaxIperfDuration)
	}
	if port < 1 || port > 65535 {
		return IperfResult{}, fmt.Errorf("netexec: iperf3 port %d", port)
	}
	ctx, cancel := context.WithTimeout(ctx, iperfStartTimeout+duration+iperfSlack)
	defer cancel()
	p := strconv.Itoa(port)

	srv := server(ctx, Iperf3Path, "-s", "-1", "-p", p, "--forceflush")
	listening := &listenWatch{ready: make(chan struct{})}
	srv.Stdout = listening
	if err := srv.Start(); err != nil {
		return IperfResult{}, fmt.Errorf("iperf3 server: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- srv.Wait() }()
	defer func() {
		srv.Process.Kill()
		<-exited
	}()
	start := time.NewTimer(iperfStartTimeout)
	defer start.Stop()
	select {
	case <-listening.ready:
	case err := <-exited:
		exited <- err // for the deferred wait
		return IperfResult{}, fmt.Errorf("iperf3 server on port %d exited before listening: %v", port, err)
	case <-start.C:
		return IperfResult{}, fmt.Errorf("iperf3 server on port %d not listening after %s", port, iperfStartTimeout)
	}

	secs := strconv.Itoa(int(duration / time.Second))
	js, runErr := client(ctx, Iperf3Path, "-c", serverIP, "-p", p, "-t", secs, "-J").Output()
	res, err := parseIperf(js)
	if err != nil {
		return IperfResult{}, fmt.Errorf("iperf3 client to %s: %w", serverIP, errors.Join(err, runErr))
	}
	return res, nil
}

// listenWatch is the server's stdout: it closes ready once the server says it listens and
// drops the rest.
type listenWatch struct {
	seen  []byte
	ready chan struct{}
	done  bool
}

func (w *listenWatch) Write(b []byte) (int, error) {
	if !w.done {
		w.seen = append(w.seen, b...)
		if bytes.Contains(w.seen, []byte("Server listening")) {
			w.done = true
			w.seen = nil
			close(w.ready)
		} else if len(w.seen) > 4096 {
			w.seen = w.seen[len(w.seen)-64:]
		}
	}
	return len(b), nil
}

// parseIperf reads the end summary of iperf3's JSON report, or the error it reports.
func parseIperf(js []byte) (IperfResult, error) {
	var rep struct {
		Error string `json:"error"`
		End   struct {
			SumSent struct {
				Seconds       float64 `json:"seconds"`
				BitsPerSecond float64 `json:"bits_per_second"`
				Retransmits   int     `json:"retransmits"`
			} `json:"sum_sent"`
			SumReceived struct {
				BitsPerSecond float64 `json:"bits_per_second"`
			} `json:"sum_received"`
		} `json:"end"`
	}
	if err := json.Unmarshal(js, &rep); err != nil {
		return IperfResult{}, fmt.Errorf("report: %w", err)
	}
	if rep.Error != "" {
		return IperfResult{}, errors.New(rep.Error)
	}
	if rep.End.SumReceived.BitsPerSecond <= 0 {
		return IperfResult{}, errors.New("report without a received throughput")
	}
	return IperfResult{
		ReceivedBitsPerSecond: rep.End.SumReceived.BitsPerSecond,
		SentBitsPerSecond:     rep.End.SumSent.BitsPerSecond,
		Retransmits:           rep.End.SumSent.Retransmits,
		Seconds:               rep.End.SumSent.Seconds,
	}, nil
}

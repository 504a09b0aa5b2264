package netexec

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"time"
)

// DialFunc opens a connection the way the lab wants it opened: from inside a given network
// namespace, or plainly in tests. Every client here dials through one, so the same check runs
// from a pod, a node's host stack or the external client.
type DialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// NetDial dials from the calling thread's network namespace.
var NetDial DialFunc = (&net.Dialer{}).DialContext

// Bounds of the clients: a request that has no earlier deadline in its context ends after
// RequestTimeout; a UDP request is tried at most UDPTries times, each waiting UDPTryTimeout
// for its reply, since a datagram may be lost where a TCP segment would be retransmitted.
const (
	RequestTimeout = 5 * time.Second
	UDPTries       = 3
	UDPTryTimeout  = 2 * time.Second
	maxBody        = 1 << 20
)

// bindConn makes the connection obey the context: its deadline, and a cancel closes it.
func bindConn(ctx context.Context, c net.Conn) (stop func() bool) {
	if d, ok := ctx.Deadline(); ok {
		c.SetDeadline(d)
	}
	return context.AfterFunc(ctx, func() { c.Close() })
}

// httpGet makes one GET on a fresh TCP connection with keep-alive off, within RequestTimeout,
// and returns the body and the status; a status other than 200 is an error that still carries
// the body.
func httpGet(ctx context.Context, dial DialFunc, addr, pathQuery string) (string, int, error) {
	ctx, cancel := context.WithTimeout(ctx, RequestTimeout)
	defer cancel()
	return get(ctx, dial, addr, pathQuery)
}

// get is httpGet bounded by the context alone, for /dial, which legitimately takes longer
// than RequestTimeout.
func get(ctx context.Context, dial DialFunc, addr, pathQuery string) (string, int, error) {
	if _, ok := ctx.Deadline(); !ok {
		return "", 0, errors.New("netexec: request without a deadline")
	}
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return "", 0, fmt.Errorf("dial %s: %w", addr, err)
	}
	defer c.Close()
	defer bindConn(ctx, c)()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+pathQuery, nil)
	if err != nil {
		return "", 0, err
	}
	req.Close = true
	body, status, err := roundTrip(c, bufio.NewReader(c), req)
	if err != nil {
		return body, status, fmt.Errorf("GET %s from %s: %w", pathQuery, addr, err)
	}
	return body, status, nil
}

// roundTrip writes one request on c and reads its response from r.
func roundTrip(c net.Conn, r *bufio.Reader, req *http.Request) (string, int, error) {
	if err := req.Write(c); err != nil {
		return "", 0, err
	}
	resp, err := http.ReadResponse(r, req)
	if err != nil {
		return "", 0, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return "", resp.StatusCode, err
	}
	if resp.StatusCode != http.StatusOK {
		return string(b), resp.StatusCode, fmt.Errorf("status %d: %q", resp.StatusCode, b)
	}
	return string(b), resp.StatusCode, nil
}

// Hostname asks /hostname: which endpoint answered.
func Hostname(ctx context.Context, dial DialFunc, addr string) (string, error) {
	b, _, err := httpGet(ctx, dial, addr, "/hostname")
	return b, err
}

// ClientIP asks /clientip: the source address and port the server saw.
func ClientIP(ctx context.Context, dial DialFunc, addr string) (netip.AddrPort, error) {
	b, _, err := httpGet(ctx, dial, addr, "/clientip")
	if err != nil {
		return netip.AddrPort{}, err
	}
	return parseClientIP(b)
}

func parseClientIP(s string) (netip.AddrPort, error) {
	ap, err := netip.ParseAddrPort(s)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("clientip answer %q: %w", s, err)
	}
	return netip.AddrPortFrom(ap.Addr().Unmap(), ap.Port()), nil
}

// Echo asks /echo?msg= and returns what came back.
func Echo(ctx context.Context, dial DialFunc, addr, msg string) (string, error) {
	b, _, err := httpGet(ctx, dial, addr, "/echo?msg="+url.QueryEscape(msg))
	return b, err
}

// Ready asks /readyz: true while serving, false once the server is terminating.
func Ready(ctx context.Context, dial DialFunc, addr string) (bool, error) {
	_, status, err := httpGet(ctx, dial, addr, "/readyz")
	if status == http.StatusServiceUnavailable {
		return false, nil
	}
	return err == nil, err
}

// SetReadiness asks /setreadiness: with ready false, /readyz answers 503
// until it is set true again.
func SetReadiness(ctx context.Context, dial DialFunc, addr string, ready bool) error {
	_, _, err := httpGet(ctx, dial, addr, "/setreadiness?ready="+strconv.FormatBool(ready))
	return err
}

// Status makes one GET of pathQuery and returns the HTTP status (0 with an
// error when no response came): a kubelet's HTTP probe.
func Status(ctx context.Context, dial DialFunc, addr, pathQuery string) (int, error) {
	_, status, err := httpGet(ctx, dial, addr, pathQuery)
	if status != 0 {
		return status, nil
	}
	return 0, err
}

// WaitReady asks /readyz every interval, at most tries times, until it answers ok: how a
// kubelet-like caller learns that a server started in another process listens. The error is
// the last try's.
func WaitReady(ctx context.Context, dial DialFunc, addr string, interval time.Duration, tries int) error {
	if tries < 1 || tries > MaxRequests {
		return fmt.Errorf("netexec: %d tries, want 1..%d", tries, MaxRequests)
	}
	var err error
	for i := 0; i < tries; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return fmt.Errorf("%s not ready: %w (last: %v)", addr, ctx.Err(), err)
			case <-time.After(interval):
			}
		}
		var ok bool
		if ok, err = Ready(ctx, dial, addr); ok {
			return nil
		}
		if err == nil {
			err = errors.New("terminating")
		}
	}
	return fmt.Errorf("%s not ready after %d tries: %w", addr, tries, err)
}

// Shutdown asks /shutdown: the server stops.
func Shutdown(ctx context.Context, dial DialFunc, addr string) error {
	_, _, err := httpGet(ctx, dial, addr, "/shutdown")
	return err
}

// DialRequest is what /dial asks the server at addr to do: Tries requests of Request (an HTTP
// path such as "hostname", or a UDP command) to Host:Port over Protocol ("http" or "udp").
type DialRequest struct {
	Host     string
	Port     int
	Request  string
	Protocol string
	Tries    int
}

// Dial asks the server at addr to be the client (/dial), as Kubernetes' e2e checks do to test
// pod-to-service paths from a pod. The wait is bounded by the server's own bound on each try.
func Dial(ctx context.Context, dial DialFunc, addr string, r DialRequest) (DialResult, error) {
	tries := r.Tries
	if tries < 1 {
		tries = 1
	}
	if tries > MaxDialTries {
		return DialResult{}, fmt.Errorf("dial: %d tries, at most %d", tries, MaxDialTries)
	}
	q := url.Values{}
	q.Set("host", r.Host)
	q.Set("port", strconv.Itoa(r.Port))
	q.Set("request", r.Request)
	q.Set("protocol", r.Protocol)
	q.Set("tries", strconv.Itoa(tries))
	// RequestTimeout would cut a long /dial short: the bound covers every try the server makes.
	ctx, cancel := context.WithTimeout(ctx, time.Duration(tries)*DialTryTimeout+RequestTimeout)
	defer cancel()
	b, _, err := get(ctx, dial, addr, "/dial?"+q.Encode())
	if err != nil {
		return DialResult{}, err
	}
	var res DialResult
	if err := json.Unmarshal([]byte(b), &res); err != nil {
		return DialResult{}, fmt.Errorf("dial answer %q: %w", b, err)
	}
	return res, nil
}

// udpOnce sends one command on a fresh UDP socket and waits, within the context, for one reply.
func udpOnce(ctx context.Context, dial DialFunc, addr, cmd string) (string, error) {
	c, err := dial(ctx, "udp", addr)
	if err != nil {
		return "", fmt.Errorf("udp dial %s: %w", addr, err)
	}
	defer c.Close()
	defer bindConn(ctx, c)()
	if _, err := c.Write([]byte(cmd)); err != nil {
		return "", fmt.Errorf("udp write to %s: %w", addr, err)
	}
	buf := make([]byte, maxCommand)
	n, err := c.Read(buf)
	if err != nil {
		return "", fmt.Errorf("udp read from %s: %w", addr, err)
	}
	return string(buf[:n]), nil
}

// udpRequest tries cmd up to UDPTries times, each on a fresh socket (a new flow, as a new
// client would be) waiting UDPTryTimeout, and returns the first reply or every try's error.
func udpRequest(ctx context.Context, dial DialFunc, addr, cmd string) (string, error) {
	var errs []error
	for i := 0; i < UDPTries && ctx.Err() == nil; i++ {
		tctx, cancel := context.WithTimeout(ctx, UDPTryTimeout)
		reply, err := udpOnce(tctx, dial, addr, cmd)
		cancel()
		if err == nil {
			return reply, nil
		}
		errs = append(errs, err)
	}
	if ctx.Err() != nil {
		errs = append(errs, ctx.Err())
	}
	return "", fmt.Errorf("udp %q to %s: %w", cmd, addr, errors.Join(errs...))
}

// UDPHostname sends "hostname" over UDP.
func UDPHostname(ctx context.Context, dial DialFunc, addr string) (string, error) {
	return udpRequest(ctx, dial, addr, CmdHostname)
}

// UDPClientIP sends "clientip" over UDP: the source the server saw.
func UDPClientIP(ctx context.Context, dial DialFunc, addr string) (netip.AddrPort, error) {
	b, err := udpRequest(ctx, dial, addr, CmdClientIP)
	if err != nil {
		return netip.AddrPort{}, err
	}
	return parseClientIP(b)
}

// UDPEcho sends "echo <msg>" over UDP; msg must not be empty (the server ignores a bare echo).
func UDPEcho(ctx context.Context, dial DialFunc, addr, msg string) (string, error) {
	if msg == "" {
		return "", errors.New("netexec: empty udp echo")
	}
	return udpRequest(ctx, dial, addr, CmdEcho+" "+msg)
}

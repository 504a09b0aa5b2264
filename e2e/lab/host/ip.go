package host

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// runner runs iproute2's ip with args and returns its standard output; its
// error carries what ip wrote to standard error. Tests replace it with a
// fake that answers from canned output.
type runner func(ctx context.Context, args ...string) ([]byte, error)

// ipTimeout bounds one ip command; a hung one must not hang the lab.
const ipTimeout = 30 * time.Second

// runIP is the runner of a real machine.
func runIP(ctx context.Context, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, ipTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "ip", args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("ip %s: %w: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// nsArgs prefixes args with the namespace switch of ip ("" is the root
// namespace).
func nsArgs(ns string, args ...string) []string {
	if ns == "" {
		return args
	}
	return append([]string{"-n", ns}, args...)
}

// link is one interface as `ip -j link show` reports it.
type link struct {
	Name    string   `json:"ifname"`
	Alias   string   `json:"ifalias"`
	Address string   `json:"address"`
	Flags   []string `json:"flags"`
	Kind    string   `json:"-"`
	Info    struct {
		Kind string `json:"info_kind"`
	} `json:"linkinfo"`
}

// parseLinks reads the output of `ip -j [-d] link show`.
func parseLinks(out []byte) ([]link, error) {
	out = bytes.TrimSpace(out)
	if len(out) == 0 {
		return nil, nil
	}
	var ls []link
	if err := json.Unmarshal(out, &ls); err != nil {
		return nil, fmt.Errorf("parse ip -j link output: %w", err)
	}
	for i := range ls {
		ls[i].Kind = ls[i].Info.Kind
	}
	return ls, nil
}

// links lists the interfaces of namespace ns ("" is the root namespace).
func (l *Lab) links(ctx context.Context, ns string) ([]link, error) {
	out, err := l.ip(ctx, nsArgs(ns, "-j", "-d", "link", "show")...)
	if err != nil {
		return nil, err
	}
	return parseLinks(out)
}

func findLink(ls []link, name string) (link, bool) {
	for _, k := range ls {
		if k.Name == name {
			return k, true
		}
	}
	return link{}, false
}

// errNotOurs is wrapped by every refusal to touch an object the lab did
// not create.
var errNotOurs = errors.New("exists and is not marked as the lab's")

// claimLink decides whether the lab may create a link named name where
// the links ls exist: absent (create it), present and marked as the lab's
// (exists, leave it), or present and someone else's (refuse).
func claimLink(ls []link, name, marker string) (exists bool, err error) {
	k, ok := findLink(ls, name)
	if !ok {
		return false, nil
	}
	if k.Alias != marker {
		return true, fmt.Errorf("link %s %w (alias %q, want %q): the lab will not touch it; remove or rename it, or pick another lab prefix", name, errNotOurs, k.Alias, marker)
	}
	return true, nil
}

// parseNetnsList reads `ip netns list` ("name" or "name (id: N)" lines).
func parseNetnsList(out []byte) []string {
	var names []string
	for _, line := range strings.Split(string(out), "\n") {
		f := strings.Fields(line)
		if len(f) > 0 {
			names = append(names, f[0])
		}
	}
	return names
}

// parsePids reads `ip netns pids` (one process ID per line).
func parsePids(out []byte) ([]int, error) {
	var pids []int
	for _, f := range strings.Fields(string(out)) {
		p, err := strconv.Atoi(f)
		if err != nil || p <= 0 {
			return nil, fmt.Errorf("ip netns pids: bad process ID %q", f)
		}
		pids = append(pids, p)
	}
	return pids, nil
}

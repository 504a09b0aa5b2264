// Package flows parses the packets `vppsvc trace` sends: one from flags, or a
// YAML list of them from a flows file. A malformed entry (a bad address, an
// unknown or mistyped field) is reported on its own, by position and name,
// and never stops the others.
package flows

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"

	"sigs.k8s.io/yaml"
)

// DefaultSourcePort is used when a source is given without a port.
const DefaultSourcePort = 40000

// MaxFileSize is the largest flows file ParseFile accepts. A hand-written
// list of flows is a few KiB (one flow is ~50 bytes); 1 MiB is ~20,000 flows,
// far more than anyone traces in one run. It bounds the YAML decoder's work
// on a file that is not what it should be: at the limit, the worst input
// measured ("-\n" repeated) takes about 1 s and 440 MiB of allocation.
const MaxFileSize = 1 << 20

// Spec is a flow as written by the user. ICMPType, ICMPCode, About and
// SendAbout are for proto ICMP only (see ICMP).
type Spec struct {
	Name      string `json:"name"`
	Src       string `json:"src"`
	Dst       string `json:"dst"`
	Proto     string `json:"proto,omitempty"`
	Ingress   string `json:"ingress,omitempty"`
	ICMPType  *int   `json:"icmp-type,omitempty"`
	ICMPCode  *int   `json:"icmp-code,omitempty"`
	About     string `json:"about,omitempty"`
	SendAbout bool   `json:"send-about,omitempty"`
	TTL       *int   `json:"ttl,omitempty"`
}

// Flow is a parsed, valid flow.
type Flow struct {
	Name     string
	Src, Dst netip.AddrPort
	Protocol uint8 // 6 TCP, 17 UDP, 132 SCTP, 1 ICMP, 58 ICMPv6
	// Ingress is the interface the packet enters on; empty means "infer it
	// from the source".
	Ingress string
	// ICMP is set for ICMP and ICMPv6 flows. Src and Dst then carry the
	// echo identifier (EchoID) in both ports for an echo, and port 0 for
	// an error; for an error with SendAbout, Src and Dst may be invalid
	// (not given: the trace fills them in from the quoted packet's trace).
	ICMP *ICMP
	// TTL is the IPv4 TTL or IPv6 hop limit the packet is sent with; 0
	// means the data plane's default (64).
	TTL uint8
}

// Parsed is one entry of a flows file: a valid Flow or the reason it is not.
type Parsed struct {
	// Index is the entry's 1-based position in the file (0 for a flow
	// from flags), so that an error names an entry whose name is missing
	// or is itself the typo.
	Index int
	Name  string
	Flow  Flow
	Err   error
}

// ErrNoFlows is the error of a flows file without a single entry: tracing
// nothing would look like success.
var ErrNoFlows = errors.New("flows file: no flows in it (want a list of {name, src, dst, proto, ingress})")

// specFields is the help an unknown field's error gives.
const specFields = "name, src, dst, proto, ingress, ttl, icmp-type, icmp-code, about, send-about"

// ParseFile parses a YAML (or JSON) list of flows. Only a file that is not
// such a list, or an empty one, is an error for the whole file; each entry is
// decoded on its own, so that a bad entry (an unknown or mistyped field
// included) is reported in its Parsed.Err and the others are still traced.
func ParseFile(data []byte) ([]Parsed, error) {
	if len(data) > MaxFileSize {
		return nil, fmt.Errorf("flows file: %d bytes is over the limit of %d bytes (1 MiB)", len(data), MaxFileSize)
	}
	var entries []json.RawMessage
	if err := yaml.Unmarshal(data, &entries); err != nil {
		return nil, fmt.Errorf("flows file: want a list of {%s}: %w", specFields, err)
	}
	if len(entries) == 0 {
		return nil, ErrNoFlows
	}
	out := make([]Parsed, len(entries))
	for i, raw := range entries {
		out[i] = parseEntry(i+1, raw)
	}
	return out, nil
}

// parseEntry decodes and validates one entry of a flows file.
func parseEntry(index int, raw json.RawMessage) Parsed {
	p := Parsed{Index: index, Name: entryName(raw)}
	if p.Name == "" {
		p.Name = fmt.Sprintf("flow-%d", index)
	}
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		p.Err = fmt.Errorf("empty entry: want {%s}", specFields)
		return p
	}
	var s Spec
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&s); err != nil {
		p.Err = entryDecodeError(err)
		return p
	}
	p.Flow, p.Err = s.Parse()
	p.Flow.Name = p.Name
	return p
}

// entryName is the entry's name when it is a string, read leniently so that
// an entry that fails to decode is still named; "" otherwise.
func entryName(raw json.RawMessage) string {
	var head struct {
		Name any `json:"name"`
	}
	if json.Unmarshal(raw, &head) != nil {
		return ""
	}
	name, _ := head.Name.(string)
	return strings.TrimSpace(name)
}

// entryDecodeError says, in the file's terms, why an entry did not decode:
// the field that is unknown or of the wrong type.
func entryDecodeError(err error) error {
	var typeErr *json.UnmarshalTypeError
	switch {
	case errors.As(err, &typeErr) && typeErr.Field == "":
		return fmt.Errorf("want {%s}, got %s", specFields, withArticle(typeErr.Value))
	case errors.As(err, &typeErr):
		want := "a string"
		switch typeErr.Field {
		case "icmp-type", "icmp-code", "ttl":
			want = "a number"
		case "send-about":
			want = "true or false"
		}
		return fmt.Errorf("%s: want %s, got %s", typeErr.Field, want, withArticle(typeErr.Value))
	}
	if field, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown field %s (fields: %s)", field, specFields)
	}
	return err
}

// withArticle turns a JSON type ("array", "number") into "an array", "a number".
func withArticle(jsonType string) string {
	if strings.ContainsAny(jsonType[:min(1, len(jsonType))], "aeiou") {
		return "an " + jsonType
	}
	return "a " + jsonType
}

// Parse validates a spec.
func (s Spec) Parse() (Flow, error) {
	f := Flow{Name: s.Name, Ingress: strings.TrimSpace(s.Ingress)}
	var err error
	if f.Protocol, err = ParseProtocol(s.Proto); err != nil {
		return f, err
	}
	if s.TTL != nil {
		if *s.TTL < 1 || *s.TTL > 255 {
			return f, fmt.Errorf("ttl: %d is not 1-255", *s.TTL)
		}
		f.TTL = uint8(*s.TTL)
	}
	if f.Protocol == ProtoICMP {
		return s.parseICMP(f)
	}
	if s.ICMPType != nil || s.ICMPCode != nil || s.About != "" || s.SendAbout {
		return f, fmt.Errorf("icmp-type, icmp-code, about and send-about need proto ICMP")
	}
	if f.Src, err = ParseEndpoint(s.Src, false); err != nil {
		return f, fmt.Errorf("src: %w", err)
	}
	if f.Dst, err = ParseEndpoint(s.Dst, true); err != nil {
		return f, fmt.Errorf("dst: %w", err)
	}
	if f.Src.Addr().Is4() != f.Dst.Addr().Is4() {
		return f, fmt.Errorf("src %s and dst %s are of different address families", f.Src.Addr(), f.Dst.Addr())
	}
	return f, nil
}

// ParseProtocol accepts TCP, UDP, SCTP or ICMP (ICMPv6 and ICMP6 are
// other names of it) in any case; empty means TCP. ICMP is ProtoICMP
// whatever the family: the addresses decide between ICMP and ICMPv6.
func ParseProtocol(s string) (uint8, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "", "TCP":
		return 6, nil
	case "UDP":
		return 17, nil
	case "SCTP":
		return 132, nil
	case "ICMP", "ICMPV6", "ICMP6":
		return ProtoICMP, nil
	}
	return 0, fmt.Errorf("proto: want TCP, UDP, SCTP or ICMP, got %q", s)
}

// ParseEndpoint parses "IP", "IP:PORT", "[IPv6]:PORT" or a bare IPv6
// address. The port must be 1–65535; it is required when needPort is set and
// DefaultSourcePort otherwise.
func ParseEndpoint(s string, needPort bool) (netip.AddrPort, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return netip.AddrPort{}, fmt.Errorf("missing address")
	}
	if ip, err := netip.ParseAddr(s); err == nil {
		if needPort {
			return netip.AddrPort{}, fmt.Errorf("%q has no port (want IP:PORT, or [IPv6]:PORT)", s)
		}
		if ip.Zone() != "" {
			return netip.AddrPort{}, fmt.Errorf("%q: zones are not supported", s)
		}
		return netip.AddrPortFrom(ip.Unmap(), DefaultSourcePort), nil
	}
	host, portStr, ok := cutPort(s)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("%q is not IP, IP:PORT or [IPv6]:PORT", s)
	}
	ip, err := netip.ParseAddr(host)
	if err != nil || ip.Zone() != "" {
		return netip.AddrPort{}, fmt.Errorf("%q: bad IP address %q", s, host)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil || port == 0 {
		return netip.AddrPort{}, fmt.Errorf("%q: port must be 1-65535", s)
	}
	return netip.AddrPortFrom(ip.Unmap(), uint16(port)), nil
}

func cutPort(s string) (host, port string, ok bool) {
	if strings.HasPrefix(s, "[") {
		end := strings.Index(s, "]:")
		if end < 0 {
			return "", "", false
		}
		return s[1:end], s[end+2:], true
	}
	i := strings.LastIndexByte(s, ':')
	if i < 0 || strings.Count(s, ":") > 1 {
		return "", "", false
	}
	return s[:i], s[i+1:], true
}

// FormatEndpoint writes ip:port, with IPv6 as [addr]:port (the trace JSON contract).
func FormatEndpoint(ap netip.AddrPort) string { return ap.String() }

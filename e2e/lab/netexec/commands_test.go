package netexec

import "testing"

// TestAnswer pins the datagram protocol: agnhost's words, case-insensitive, with the message
// of an echo kept as sent; unknown and empty commands get no reply.
func TestAnswer(t *testing.T) {
	s := &Server{opts: Options{Hostname: "pod-a"}}
	cases := []struct {
		in, want string
		ok       bool
	}{
		{"hostname", "pod-a", true},
		{"  HostName\n", "pod-a", true},
		{"clientip", "10.0.0.1:4242", true},
		{"serverport", "8081", true},
		{"echo hello", "hello", true},
		{"echo Hello World", "Hello World", true},
		{"ECHO  two spaces", " two spaces", true},
		{"echo", "", false},
		{"echo ", "", false},
		{"hostname please", "", false},
		{"", "", false},
		{"dance", "", false},
	}
	for _, c := range cases {
		got, ok := s.answer(c.in, "10.0.0.1:4242", "8081")
		if got != c.want || ok != c.ok {
			t.Errorf("answer(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}

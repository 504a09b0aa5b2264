package cnattrace

import "testing"

func TestAMapsTheIPv6PlanToIPv4(t *testing.T) {
	v4, v6 := &Face{IPv4: true}, &Face{}
	for in, want := range map[string]string{
		"fd00:96::10":         "10.96.0.10",
		"[fd00:1:1::2]:8080":  "10.1.1.2:8080",
		"[fd00:1:2::3]:8080":  "10.1.2.3:8080",
		"[fd00:16::1]:30080":  "192.168.16.1:30080",
		"2001:db8:1b::12":     "198.51.100.12",
		"[2001:db8:e::10]:81": "203.0.113.10:81",
		"2001:db8:c:1::109":   "100.64.1.109",
		"2001:db8:c:1::/64":   "100.64.1.0/24",
		"100.64.1.0/24":       "2001:db8:c:1::/64",
		"fd00:96::/108":       "10.96.0.0/16",
		"[fd00:30::2]:22":     "172.30.1.2:22",
	} {
		if got := v4.A(in); got != want {
			t.Errorf("A(%q) = %q on IPv4, want %q", in, got, want)
		}
		if got := v6.A(in); got != in {
			t.Errorf("A(%q) = %q on IPv6, want it unchanged", in, got)
		}
	}
	for _, bad := range []string{"fd00:96::1a", "fd00:96::256", "fd00:99::1", "fd00:96::10]:80", "10.96.0.10"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("A(%q) on IPv4 did not panic: outside the plan", bad)
				}
			}()
			v4.A(bad)
		}()
	}
}

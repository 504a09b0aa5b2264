package renderer

import (
	"strings"
	"testing"

	"github.com/vppsvc/vppsvc/model"
)

func TestShortHash(t *testing.T) {
	h := ShortHash("default/kubernetes")
	if len(h) != hashLen {
		t.Fatalf("ShortHash length = %d, want %d", len(h), hashLen)
	}
	if h != ShortHash("default/kubernetes") {
		t.Fatal("ShortHash is not deterministic")
	}
	if h == ShortHash("default/kubernetez") {
		t.Fatal("ShortHash does not depend on its input")
	}
	for _, c := range h {
		if !(c >= 'a' && c <= 'z' || c >= '2' && c <= '7') {
			t.Fatalf("ShortHash %q has character %q outside lower-case base32", h, c)
		}
	}
}

func TestServiceACLName(t *testing.T) {
	long := strings.Repeat("n", 63)
	tests := []struct {
		name     string
		prefix   string
		id       model.ServiceID
		wantTail string // readable part after "<prefix>-<hash>-"
	}{
		{"short", "nat44", model.ServiceID{Namespace: "default", Name: "web"}, "default.web"},
		{"longest namespace and name", "nat44", model.ServiceID{Namespace: long, Name: long}, long[:63-len("nat44-")-hashLen-1]},
		{"other renderer", "ip6", model.ServiceID{Namespace: "default", Name: "web"}, "default.web"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ServiceACLName(tt.prefix, tt.id)
			if len(got) > MaxTagLen {
				t.Fatalf("%q is %d bytes, more than %d", got, len(got), MaxTagLen)
			}
			wantHead := tt.prefix + "-" + ShortHash(tt.prefix+"/"+tt.id.Namespace+"/"+tt.id.Name) + "-"
			if got != wantHead+tt.wantTail {
				t.Fatalf("ServiceACLName = %q, want %q", got, wantHead+tt.wantTail)
			}
		})
	}
	a := ServiceACLName("nat44", model.ServiceID{Namespace: long, Name: long + "a"})
	b := ServiceACLName("nat44", model.ServiceID{Namespace: long, Name: long + "b"})
	if a == b {
		t.Fatalf("truncated names of different services collide: %q", a)
	}
	if ServiceACLName("nat44", model.ServiceID{Namespace: "a", Name: "b"}) == ServiceACLName("ip6", model.ServiceID{Namespace: "a", Name: "b"}) {
		t.Fatal("two renderers share an ACL name")
	}
}

func TestServiceLabel(t *testing.T) {
	short := model.ServiceID{Namespace: "kube-system", Name: "kube-dns"}
	if got := ServiceLabel(short); got != "kube-system/kube-dns" {
		t.Fatalf("ServiceLabel = %q, want the service ID", got)
	}
	long := model.ServiceID{Namespace: strings.Repeat("a", 40), Name: strings.Repeat("b", 40)}
	got := ServiceLabel(long)
	if len(got) != MaxTagLen {
		t.Fatalf("ServiceLabel of a long ID is %d bytes, want %d", len(got), MaxTagLen)
	}
	if !strings.HasPrefix(got, ShortHash(long.String())+"~"+long.Namespace) {
		t.Fatalf("ServiceLabel = %q, want hash~ID prefix", got)
	}
	other := long
	other.Name += "c"
	if ServiceLabel(other) == got {
		t.Fatal("labels of different long IDs collide")
	}
}

func TestTruncateKeepsUTF8(t *testing.T) {
	if got := truncate("aé", 2); got != "a" {
		t.Fatalf("truncate split a UTF-8 sequence: %q", got)
	}
}

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

func TestServiceLabel(t *testing.T) {
	short := model.ServiceID{Namespace: "kube-system", Name: "kube-dns"}
	if got := ServiceLabel(short); got != "kube-system/kube-dns" {
		t.Fatalf("ServiceLabel = %q, want the service ID", got)
	}
	long := model.ServiceID{Namespace: strings.Repeat("a", 40), Name: strings.Repeat("b", 40)}
	got := ServiceLabel(long)
	if len(got) != MaxLabelLen {
		t.Fatalf("ServiceLabel of a long ID is %d bytes, want %d", len(got), MaxLabelLen)
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

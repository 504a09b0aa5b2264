package inspect

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/sirupsen/logrus"
)

// The inspector's API as an embedder serves it: the snapshot, one service,
// filtered items, and the errors a caller can make.
func TestHandler(t *testing.T) {
	snap := &Snapshot{Synced: true, Services: []ServiceState{{
		Namespace: "default", Name: "web",
		Renderers: []RendererItems{{Renderer: "nat44", Items: []ItemView{{Status: "applied"}, {Status: "failed"}}}},
	}}}
	log := logrus.New()
	log.SetOutput(io.Discard)
	srv := httptest.NewServer(Handler(func() *Snapshot { return snap }, log))
	defer srv.Close()
	get := func(path string) (int, []byte) {
		t.Helper()
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	for _, c := range []struct {
		path string
		code int
	}{
		{"/v1/services", http.StatusOK},
		{"/v1/services/default/web", http.StatusOK},
		{"/v1/services/default/nope", http.StatusNotFound},
		{"/v1/items?status=bogus", http.StatusBadRequest},
		{"/v1/items?status=failed", http.StatusOK},
	} {
		if code, body := get(c.path); code != c.code {
			t.Errorf("GET %s: %d %s, want %d", c.path, code, body, c.code)
		}
	}
	_, body := get("/v1/items?status=failed&service=default/web")
	var items []ListedItem
	if err := json.Unmarshal(body, &items); err != nil {
		t.Fatal(err)
	}
	if len(items) != 1 || items[0].Renderer != "nat44" || items[0].Service != "default/web" {
		t.Errorf("failed items of default/web: %+v, want the one failed nat44 item", items)
	}
}

package server

import (
	"net/http"
	"testing"

	"github.com/perfbot/perfbot/github/webhook"
)

func TestDashboardServesEveryOtherPath(t *testing.T) {
	t.Parallel()
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("dashboard " + r.URL.Path)) })
	h := New(Config{Webhook: &webhook.Handler{}, Dashboard: dash})
	for path, want := range map[string]string{"/": "dashboard /", "/trend": "dashboard /trend", "/healthz": "ok\n"} {
		if code, body := get(t, h, path); code != 200 || body != want {
			t.Errorf("GET %s: %d %q; want %q", path, code, body, want)
		}
	}
	if code, _ := get(t, New(Config{Webhook: &webhook.Handler{}}), "/"); code != http.StatusNotFound {
		t.Errorf("GET / without a dashboard: %d; want 404", code)
	}
}

package server

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/github/webhook"
)

func TestDashboardServesEveryOtherPath(t *testing.T) {
	t.Parallel()
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("dashboard " + r.URL.Path)) })
	h := New(Config{Webhook: &webhook.Handler{}, Private: true, Dashboard: dash})
	for path, want := range map[string]string{"/": "dashboard /", "/trend": "dashboard /trend", "/healthz": "ok\n"} {
		if code, body := get(t, h, path); code != 200 || body != want {
			t.Errorf("GET %s: %d %q; want %q", path, code, body, want)
		}
	}
	if code, _ := get(t, New(Config{Webhook: &webhook.Handler{}, Private: true}), "/"); code != http.StatusNotFound {
		t.Errorf("GET / without a dashboard: %d; want 404", code)
	}
}

// TestTheWebhooksListenerServesNothingPrivate: where the dashboard has a
// listener of its own, the webhook's serves /webhook and /healthz only.
func TestTheWebhooksListenerServesNothingPrivate(t *testing.T) {
	t.Parallel()
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("jobs")) })
	public := New(Config{Webhook: &webhook.Handler{}, Metrics: NewMetrics(Counts{}, nil), Dashboard: dash})
	for _, path := range []string{"/", "/jobs", "/api/jobs", "/metrics"} {
		if code, body := get(t, public, path); code != http.StatusNotFound || strings.Contains(body, "jobs") {
			t.Errorf("GET %s on the webhook's listener: %d %q; want 404", path, code, body)
		}
	}
	if code, _ := get(t, public, "/healthz"); code != 200 {
		t.Errorf("/healthz: %d", code)
	}
}

// TestAPrivateTokenIsRequiredOfEveryPrivateRequest: with a token, the
// dashboard and /metrics answer 401 (and a basic-auth challenge, which
// browsers show) to a request without it or with a wrong one, and serve
// it given as a bearer token or as a basic-auth password; /webhook and
// /healthz never ask for it.
func TestAPrivateTokenIsRequiredOfEveryPrivateRequest(t *testing.T) {
	t.Parallel()
	const token = "d4shb0ard-t0ken"
	dash := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("the jobs")) })
	h := New(Config{Webhook: &webhook.Handler{Secret: []byte("s"), Sink: &Dispatcher{}}, Metrics: NewMetrics(Counts{}, nil), Private: true, Dashboard: dash, Token: token})
	ask := func(path string, set func(*http.Request)) (int, string, string) {
		req := httptest.NewRequest(http.MethodGet, path, nil)
		if set != nil {
			set(req)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec.Code, rec.Body.String(), rec.Header().Get("WWW-Authenticate")
	}
	for _, path := range []string{"/", "/jobs", "/api/jobs", "/metrics"} {
		for name, set := range map[string]func(*http.Request){
			"no token":       nil,
			"wrong bearer":   func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token+"x") },
			"wrong password": func(r *http.Request) { r.SetBasicAuth("ada", "nope") },
			"empty bearer":   func(r *http.Request) { r.Header.Set("Authorization", "Bearer ") },
		} {
			code, body, challenge := ask(path, set)
			if code != http.StatusUnauthorized || strings.Contains(body, "jobs") || strings.Contains(body, "go_goroutines") || !strings.Contains(challenge, "Basic") {
				t.Errorf("GET %s, %s: %d %q (challenge %q); want 401 with nothing served", path, name, code, body, challenge)
			}
		}
		for name, set := range map[string]func(*http.Request){
			"bearer":   func(r *http.Request) { r.Header.Set("Authorization", "Bearer "+token) },
			"password": func(r *http.Request) { r.SetBasicAuth("anyone", token) },
		} {
			if code, _, _ := ask(path, set); code != 200 {
				t.Errorf("GET %s with the token as %s: %d; want 200", path, name, code)
			}
		}
	}
	if code, _, _ := ask("/healthz", nil); code != 200 {
		t.Errorf("/healthz without the token: %d; want 200", code)
	}
	req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(`{}`))
	req.Header.Set("X-GitHub-Event", "push")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized || strings.Contains(rec.Header().Get("WWW-Authenticate"), "dashboard") {
		t.Errorf("unsigned webhook: %d (challenge %q); want the webhook's own 401 (bad signature), no dashboard challenge", rec.Code, rec.Header().Get("WWW-Authenticate"))
	}
}

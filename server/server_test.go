package server

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/github/webhook"
)

func get(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func TestHealthzFollowsTheDatabase(t *testing.T) {
	t.Parallel()
	var down error
	h := New(Config{Webhook: &webhook.Handler{}, Ping: func(context.Context) error { return down }})
	if code, body := get(t, h, "/healthz"); code != 200 || body != "ok\n" {
		t.Errorf("healthy: %d %q", code, body)
	}
	down = errors.New("connection refused")
	if code, body := get(t, h, "/healthz"); code != 503 || !strings.Contains(body, "database") {
		t.Errorf("database down: %d %q; want 503 naming the database", code, body)
	}
}

func TestMetricsCountWebhooksAndReadTheDatabase(t *testing.T) {
	t.Parallel()
	m := NewMetrics(Counts{
		Jobs: func(context.Context) (map[[2]string]int, error) {
			return map[[2]string]int{{"perfbot_compare", "running"}: 2, {"perfbot_notify", "completed"}: 5}, nil
		},
		Comparisons: func(context.Context) (map[string]int64, error) { return map[string]int64{"no-change": 7}, nil },
	}, nil)
	// An unsigned delivery through the real handler is counted as refused.
	h := New(Config{Webhook: &webhook.Handler{Secret: []byte("s"), Sink: &Dispatcher{}}, Metrics: m, Private: true})
	req := httptest.NewRequest(http.MethodPost, "/webhook", strings.NewReader(`{}`))
	req.Header.Set("X-GitHub-Event", "push")
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	if rec.Code != http.StatusUnauthorized {
		t.Fatalf("unsigned webhook: %d, want 401", rec.Code)
	}
	m.ObserveJob("perfbot_compare", "ok", 90e9)
	code, body := get(t, h, "/metrics")
	if code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
	for _, want := range []string{
		`perfbot_webhooks_total{event="push",outcome="bad_signature"} 1`,
		`perfbot_jobs{kind="perfbot_compare",state="running"} 2`,
		`perfbot_jobs{kind="perfbot_notify",state="completed"} 5`,
		`perfbot_comparisons_total{verdict="no-change"} 7`,
		`perfbot_job_duration_seconds_bucket{kind="perfbot_compare",outcome="ok",le="60"} 0`,
		`perfbot_job_duration_seconds_bucket{kind="perfbot_compare",outcome="ok",le="300"} 1`,
		`perfbot_database_up 1`,
		`go_goroutines`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}
	// A database error shows as perfbot_database_up 0, not a failed scrape.
	m2 := NewMetrics(Counts{Jobs: func(context.Context) (map[[2]string]int, error) { return nil, errors.New("gone") }}, nil)
	if _, body := get(t, New(Config{Metrics: m2, Private: true}), "/metrics"); !strings.Contains(body, "perfbot_database_up 0") {
		t.Errorf("/metrics with the database down lacks perfbot_database_up 0")
	}
}

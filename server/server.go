// Package server is perfbot serve's HTTP side: POST /webhook (GitHub's
// deliveries, verified and turned into jobs by a Dispatcher), GET /healthz,
// GET /metrics (Prometheus) and, on every other path, the dashboard
// (package server/dashboard) when one is configured.
//
// In flow HTTP requests; out flow jobs in the queue and metrics. The
// GitHub API is never called while a request waits: replies and checks
// are jobs on the control queue, worked by perfbot serve in the
// background.
package server

import (
	"context"
	"log/slog"
	"net/http"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/perfbot/perfbot/github/webhook"
)

// Config is what New needs.
type Config struct {
	Webhook *webhook.Handler // its Observe is set to count into Metrics
	Metrics *Metrics
	// Ping checks the database for /healthz; nil skips it.
	Ping func(context.Context) error
	// Dashboard serves every path the others do not (the web pages,
	// server/dashboard); nil serves none.
	Dashboard http.Handler
	Logger    *slog.Logger
}

// New returns the HTTP handler of perfbot serve.
func New(cfg Config) http.Handler {
	mux := http.NewServeMux()
	if cfg.Metrics != nil {
		cfg.Webhook.Observe = cfg.Metrics.ObserveWebhook
		mux.Handle("GET /metrics", promhttp.HandlerFor(cfg.Metrics.Registry, promhttp.HandlerOpts{}))
	}
	mux.Handle("/webhook", cfg.Webhook)
	if cfg.Dashboard != nil {
		mux.Handle("/", cfg.Dashboard)
	}
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if cfg.Ping != nil {
			ctx, cancel := context.WithTimeout(r.Context(), 2*time.Second)
			defer cancel()
			if err := cfg.Ping(ctx); err != nil {
				w.WriteHeader(http.StatusServiceUnavailable)
				w.Write([]byte("database unreachable\n"))
				return
			}
		}
		w.Write([]byte("ok\n"))
	})
	return mux
}

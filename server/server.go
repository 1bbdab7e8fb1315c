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
	"crypto/subtle"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/perfbot/perfbot/github/webhook"
)

// Config is what New needs.
type Config struct {
	// Webhook serves POST /webhook; its Observe is set to count into
	// Metrics. nil serves no webhook (the dashboard's own listener).
	Webhook *webhook.Handler
	Metrics *Metrics
	// Ping checks the database for /healthz; nil skips it.
	Ping func(context.Context) error
	// Private serves GET /metrics and the Dashboard (every path the
	// others do not: the web pages, server/dashboard; nil serves none).
	// perfbot serve keeps them on a listener of their own unless told to
	// share the webhook's, behind Token.
	Private   bool
	Dashboard http.Handler
	// Token, when set, is what every private request must carry:
	// Authorization: Bearer TOKEN, or basic auth with the token as
	// password. Without it they are answered 401 and nothing is served.
	Token  string
	Logger *slog.Logger
}

// New returns the HTTP handler of perfbot serve.
func New(cfg Config) http.Handler {
	mux := http.NewServeMux()
	if cfg.Webhook != nil {
		if cfg.Metrics != nil {
			cfg.Webhook.Observe = cfg.Metrics.ObserveWebhook
		}
		mux.Handle("/webhook", cfg.Webhook)
	}
	if cfg.Private {
		guard := func(h http.Handler) http.Handler { return h }
		if cfg.Token != "" {
			guard = func(h http.Handler) http.Handler { return requireToken(cfg.Token, h) }
		}
		if cfg.Metrics != nil {
			mux.Handle("GET /metrics", guard(promhttp.HandlerFor(cfg.Metrics.Registry, promhttp.HandlerOpts{})))
		}
		if cfg.Dashboard != nil {
			mux.Handle("/", guard(cfg.Dashboard))
		}
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

// requireToken serves h only to requests that carry token, as a bearer
// token or as a basic-auth password (any user name: browsers ask for one),
// compared in constant time; others get 401 and nothing of h.
func requireToken(token string, h http.Handler) http.Handler {
	want := []byte(token)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got, ok := "", false
		if auth := r.Header.Get("Authorization"); len(auth) > 7 && strings.EqualFold(auth[:7], "bearer ") {
			got, ok = strings.TrimSpace(auth[7:]), true
		} else {
			_, got, ok = r.BasicAuth()
		}
		if ok && subtle.ConstantTimeCompare([]byte(got), want) == 1 {
			h.ServeHTTP(w, r)
			return
		}
		w.Header().Set("WWW-Authenticate", `Basic realm="perfbot dashboard", charset="UTF-8"`)
		http.Error(w, "perfbot: this dashboard needs its token: send Authorization: Bearer TOKEN, or any user name with the token as password", http.StatusUnauthorized)
	})
}

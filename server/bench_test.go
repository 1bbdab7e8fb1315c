package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"slices"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/webhook"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// BenchmarkWebhookDelivery measures what GitHub waits for: a signed
// pull_request delivery over HTTP, its replay check, and the jobs it
// queues (the comparison, cancelling the previous head's, and a queued
// check) in PostgreSQL. Every delivery is a new push to one pull request.
// The target is an answer within 100 ms; p50/p99/max are reported.
func BenchmarkWebhookDelivery(b *testing.B) {
	db, err := store.Open(context.Background(), storetest.FreshPostgres(b), store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	q, err := queue.New(db, queue.Config{})
	if err != nil {
		b.Fatal(err)
	}
	secret := []byte("bench-secret")
	srv := httptest.NewServer(New(Config{
		Webhook: &webhook.Handler{Secret: secret,
			Sink: &Dispatcher{Repos: map[string]Repo{"acme/prover": {Name: "acme/prover", Queue: "gpu"}}, Queue: q}},
		Metrics: NewMetrics(Counts{}, nil),
	}))
	defer srv.Close()
	repo := map[string]any{"id": 1, "full_name": "acme/prover", "clone_url": "https://github.com/acme/prover.git"}
	var lat []time.Duration
	b.ResetTimer()
	for i := range b.N {
		head := fmt.Sprintf("%040x", i+1)
		body, _ := json.Marshal(map[string]any{
			"action": "synchronize", "number": 7,
			"pull_request": map[string]any{"number": 7, "draft": false,
				"head": map[string]any{"ref": "f", "sha": head, "repo": repo},
				"base": map[string]any{"ref": "main", "sha": fmt.Sprintf("%040x", 0xba5e), "repo": repo}},
			"repository": repo, "sender": map[string]any{"login": "ada"},
		})
		m := hmac.New(sha256.New, secret)
		m.Write(body)
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/webhook", bytes.NewReader(body))
		req.Header.Set("X-GitHub-Event", "pull_request")
		req.Header.Set("X-GitHub-Delivery", fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i))
		req.Header.Set("X-Hub-Signature-256", "sha256="+hex.EncodeToString(m.Sum(nil)))
		start := time.Now()
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		resp.Body.Close()
		lat = append(lat, time.Since(start))
		if resp.StatusCode != http.StatusAccepted {
			b.Fatalf("delivery %d: status %d", i, resp.StatusCode)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
}

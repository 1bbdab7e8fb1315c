package server

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// BenchmarkWebhookDelivery measures what GitHub waits for: a signed
// pull_request delivery over HTTP, its replay check, and the jobs it
// queues (the comparison, cancelling the previous head's, and a queued
// check) in PostgreSQL. Every delivery is a new push to one pull request.
// The target is an answer within 100 ms; p50/p99/max are reported.
func BenchmarkWebhookDelivery(b *testing.B) {
	secret := []byte("bench-secret")
	url, _, _ := webhookServer(b, storetest.FreshPostgres(b), secret, proverRepo)
	lat := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := range b.N {
		d := signed(secret, "pull_request", fmt.Sprintf("bench-%d-%d", time.Now().UnixNano(), i),
			pullPayload("acme/prover", "synchronize", 7, fmt.Sprintf("%040x", i+1), false))
		start := time.Now()
		code, text, err := d.send(url)
		lat = append(lat, time.Since(start))
		if err != nil || code != http.StatusAccepted {
			b.Fatalf("delivery %d: %d %q %v", i, code, text, err)
		}
	}
	b.StopTimer()
	reportLatencies(b, lat)
}

// BenchmarkWebhookDeliveryConcurrent is issue 17's target: 8 senders at
// once, each delivery a new push to one of 500 pull requests, with 10,000
// comparison jobs already in the table (the superseded-jobs lookup must not
// grow with it). p50/p99/max over every delivery; the target is p99 ≤ 100
// ms on the 2-core machine.
func BenchmarkWebhookDeliveryConcurrent(b *testing.B) {
	secret := []byte("bench-secret")
	url, _, db := webhookServer(b, storetest.FreshPostgres(b), secret, proverRepo)
	q, err := queue.New(db, queue.Config{})
	if err != nil {
		b.Fatal(err)
	}
	const preload, prs, senders = 10_000, 500, 8
	for i := range preload {
		if _, err := q.InsertCompare(context.Background(), "gpu", queue.CompareArgs{Repo: "acme/other", PR: i, HeadSHA: fmt.Sprintf("%040x", i), BaseSHA: fmt.Sprintf("%040x", 0xba5e)}); err != nil {
			b.Fatal(err)
		}
	}
	lat := make([]time.Duration, b.N)
	var next atomic.Int64
	b.ResetTimer()
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= b.N {
					return
				}
				pr := 1 + i%prs
				d := signed(secret, "pull_request", fmt.Sprintf("bench-c-%d-%d", time.Now().UnixNano(), i),
					pullPayload("acme/prover", "synchronize", pr, fmt.Sprintf("%040x", 1<<20+i), false))
				start := time.Now()
				code, text, err := d.send(url)
				lat[i] = time.Since(start)
				if err != nil || code != http.StatusAccepted {
					b.Errorf("delivery %d: %d %q %v", i, code, text, err)
					return
				}
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	reportLatencies(b, lat)
}

// reportLatencies reports the p50, p99 and largest of lat in ms.
func reportLatencies(b *testing.B, lat []time.Duration) {
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
	b.ReportMetric(pct(0.5), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
	b.ReportMetric(pct(1), "max-ms")
}

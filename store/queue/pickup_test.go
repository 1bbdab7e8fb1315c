package queue_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// pickupWorker reports when each baseline job starts.
type pickupWorker struct {
	river.WorkerDefaults[queue.BaselineArgs]
	started chan time.Time
}

func (w *pickupWorker) Work(context.Context, *river.Job[queue.BaselineArgs]) error {
	w.started <- time.Now()
	return nil
}

// BenchmarkPickupLatency measures what River's poll-only mode costs
// (its database/sql driver cannot LISTEN): the time from a job's insert
// committing to an idle worker starting it, at the default poll interval
// of 2 s and at 200 ms. p50/p99/max over b.N jobs, one at a time.
func BenchmarkPickupLatency(b *testing.B) {
	for _, poll := range []time.Duration{2 * time.Second, 200 * time.Millisecond} {
		b.Run(fmt.Sprintf("poll=%s", poll), func(b *testing.B) {
			ctx := context.Background()
			db, err := store.Open(ctx, storetest.FreshPostgres(b), store.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer db.Close()
			w := &pickupWorker{started: make(chan time.Time, 1)}
			workers := river.NewWorkers()
			river.AddWorker(workers, w)
			q, err := queue.New(db, queue.Config{Queues: map[string]int{queue.DefaultQueue: 1}, Workers: workers, PollInterval: poll})
			if err != nil {
				b.Fatal(err)
			}
			if err := q.Start(ctx); err != nil {
				b.Fatal(err)
			}
			defer q.Stop(ctx)
			lat := make([]time.Duration, 0, b.N)
			for i := range b.N {
				// Inserts land at a random phase of the poll.
				time.Sleep(time.Duration(i*37%100) * poll / 100)
				t0 := time.Now()
				if _, err := q.InsertBaseline(ctx, "", queue.BaselineArgs{Repo: "o/r", SHA: fmt.Sprintf("%040x", i)}); err != nil {
					b.Fatal(err)
				}
				select {
				case at := <-w.started:
					lat = append(lat, at.Sub(t0))
				case <-time.After(poll + 10*time.Second):
					b.Fatalf("job %d not picked up in %s", i, poll+10*time.Second)
				}
			}
			slices.Sort(lat)
			pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))]) / 1e6 }
			b.ReportMetric(pct(0.5), "p50-ms")
			b.ReportMetric(pct(0.99), "p99-ms")
			b.ReportMetric(pct(1), "max-ms")
		})
	}
}

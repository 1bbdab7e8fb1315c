package server

import (
	"bytes"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// TestNoDeliveryIsLostWhenPostgreSQLRestartsMidBurst is issue 17's first
// bug: 400 signed pull_request deliveries (distinct PRs, 8 senders at
// once) while the database is stopped (pg_ctl -m fast) and started again
// in the middle; then every answer that was not 2xx is resent with the
// same X-GitHub-Delivery, as GitHub's redelivery does, until each is
// answered 2xx. Each PR must end with exactly one comparison job and one
// queued check, and no redelivery may be answered "duplicate delivery"
// for an event that queued nothing. Before the fix (delivery ID committed
// on its own, then the jobs) a restart lost a few PRs in every such
// burst.
func TestNoDeliveryIsLostWhenPostgreSQLRestartsMidBurst(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own PostgreSQL and restarts it: skipped in -short mode")
	}
	pg := storetest.OwnPostgres(t)
	secret := []byte("restart-secret")
	var logged bytes.Buffer // slog's handler writes one record at a time
	url, _, db := webhookServerLogged(t, pg.DSN, secret, proverRepo, slog.New(slog.NewTextHandler(&logged, nil)))

	const n, senders, restartAfter = 400, 8, 120
	deliveries := make([]signedDelivery, n)
	for i := range deliveries {
		pr := i + 1
		deliveries[i] = signed(secret, "pull_request", fmt.Sprintf("restart-%d", pr),
			pullPayload("acme/prover", "opened", pr, fmt.Sprintf("%040x", 0x1000+pr), false))
		deliveries[i].pr = pr
	}
	var answered atomic.Int64
	restarted := make(chan struct{})
	go func() {
		defer close(restarted)
		for answered.Load() < restartAfter {
			time.Sleep(time.Millisecond)
		}
		pg.Stop()
		time.Sleep(time.Second)
		pg.Start()
	}()
	status := make([]int, n)
	work := make(chan int)
	var wg sync.WaitGroup
	for range senders {
		wg.Go(func() {
			for i := range work {
				code, _, err := deliveries[i].send(url)
				if err != nil {
					t.Errorf("delivery %s: %v", deliveries[i].id, err)
				}
				status[i] = code
				answered.Add(1)
			}
		})
	}
	for i := range deliveries {
		work <- i
	}
	close(work)
	wg.Wait()
	<-restarted

	var failed []int
	for i, code := range status {
		if code/100 != 2 {
			failed = append(failed, i)
		}
	}
	if len(failed) == 0 {
		t.Fatalf("all %d deliveries were answered 2xx: the restart did not overlap the burst, so nothing was tested", n)
	}
	t.Logf("%d of %d deliveries answered non-2xx during the restart; resending them", len(failed), n)
	// GitHub redelivers by hand or on its own schedule; here, until each
	// is answered 2xx (the pool reconnects on its own).
	deadline := time.Now().Add(30 * time.Second)
	for _, i := range failed {
		for {
			code, text, err := deliveries[i].send(url)
			if err == nil && code/100 == 2 {
				if text == "duplicate delivery" {
					t.Errorf("delivery %s (PR %d): first answered %d, then %q on redelivery: its event was recorded without its jobs",
						deliveries[i].id, deliveries[i].pr, status[i], text)
				}
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("delivery %s still answered %d %q (%v) 30 s after the restart", deliveries[i].id, code, text, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}

	// A delivery answered 2xx stays recorded: GitHub's redelivery of it
	// queues nothing more.
	for _, d := range []signedDelivery{deliveries[0], deliveries[failed[0]]} {
		if code, text, err := d.send(url); err != nil || code != http.StatusOK || text != "duplicate delivery" {
			t.Errorf("redelivery of %s: %d %q (%v); want 200 \"duplicate delivery\"", d.id, code, text, err)
		}
	}

	compares, queued := map[int]int{}, map[int]int{}
	for _, j := range riverJobs(t, db) {
		pr := int(j.Args["pr"].(float64))
		switch {
		case j.Kind == queue.KindCompare:
			compares[pr]++
		case j.Kind == queue.KindNotify && j.Args["check_title"] == "Queued":
			queued[pr]++
		}
	}
	lost, doubled := 0, 0
	for _, d := range deliveries {
		if compares[d.pr] != 1 || queued[d.pr] != 1 {
			if compares[d.pr] == 0 || queued[d.pr] == 0 {
				lost++
			} else {
				doubled++
			}
			if lost+doubled <= 10 {
				t.Errorf("PR %d: %d comparison jobs and %d queued checks; want exactly one of each", d.pr, compares[d.pr], queued[d.pr])
			}
		}
	}
	if lost+doubled > 0 {
		t.Errorf("%d of %d PRs lost a job or check, %d got more than one", lost, n, doubled)
	}
	// The log says "comparison queued" once per PR: a delivery whose
	// transaction rolled back (answered 500, resent) says nothing.
	if lines := strings.Count(logged.String(), "comparison queued"); lines != n {
		t.Errorf("%d \"comparison queued\" log lines for %d PRs queued once each; want one per PR", lines, n)
	}
}

package server

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/perfbot/perfbot/github/webhook"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// signedDelivery is one webhook delivery as GitHub sends it: a new pull
// request number pr in acme/prover, its delivery ID and HMAC signature.
type signedDelivery struct {
	id    string
	event string // X-GitHub-Event; "" is pull_request
	pr    int
	body  []byte
	sig   string
}

// signed makes a delivery of event with payload, signed with secret.
func signed(secret []byte, event, id string, payload map[string]any) signedDelivery {
	body, _ := json.Marshal(payload)
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return signedDelivery{id: id, event: event, body: body, sig: "sha256=" + hex.EncodeToString(m.Sum(nil))}
}

func newSignedDelivery(secret []byte, pr int) signedDelivery {
	repo := map[string]any{"id": 1, "full_name": "acme/prover", "clone_url": "https://github.com/acme/prover.git"}
	body, _ := json.Marshal(map[string]any{
		"action": "opened", "number": pr,
		"pull_request": map[string]any{"number": pr, "draft": false,
			"head": map[string]any{"ref": "f", "sha": fmt.Sprintf("%040x", 0x1000+pr), "repo": repo},
			"base": map[string]any{"ref": "main", "sha": fmt.Sprintf("%040x", 0xba5e), "repo": repo}},
		"repository": repo, "sender": map[string]any{"login": "ada"},
	})
	m := hmac.New(sha256.New, secret)
	m.Write(body)
	return signedDelivery{id: fmt.Sprintf("restart-%d", pr), pr: pr, body: body, sig: "sha256=" + hex.EncodeToString(m.Sum(nil))}
}

// send posts d and returns the status and the answer's text.
func (d signedDelivery) send(url string) (int, string, error) {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(d.body))
	if err != nil {
		return 0, "", err
	}
	event := d.event
	if event == "" {
		event = "pull_request"
	}
	req.Header.Set("X-GitHub-Event", event)
	req.Header.Set("X-GitHub-Delivery", d.id)
	req.Header.Set("X-Hub-Signature-256", d.sig)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return 0, "", err
	}
	defer resp.Body.Close()
	text, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(bytes.TrimSpace(text)), nil
}

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
	ctx := context.Background()
	db, err := store.Open(ctx, pg.DSN, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	q, err := queue.New(db, queue.Config{})
	if err != nil {
		t.Fatal(err)
	}
	secret := []byte("restart-secret")
	srv := httptest.NewServer(New(Config{
		Webhook: &webhook.Handler{Secret: secret,
			Sink: &Dispatcher{Repos: map[string]Repo{"acme/prover": {Name: "acme/prover", Queue: "gpu"}}, Queue: q}},
		Metrics: NewMetrics(Counts{}, nil),
	}))
	t.Cleanup(srv.Close)
	url := srv.URL + "/webhook"

	const n, senders, restartAfter = 400, 8, 120
	deliveries := make([]signedDelivery, n)
	for i := range deliveries {
		deliveries[i] = newSignedDelivery(secret, i+1)
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
	rows, err := db.SQL().Query(`SELECT kind, args FROM river_job`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var kind string
		var raw []byte
		if err := rows.Scan(&kind, &raw); err != nil {
			t.Fatal(err)
		}
		var args struct {
			PR         int    `json:"pr"`
			CheckTitle string `json:"check_title"`
		}
		if err := json.Unmarshal(raw, &args); err != nil {
			t.Fatal(err)
		}
		switch {
		case kind == queue.KindCompare:
			compares[args.PR]++
		case kind == queue.KindNotify && args.CheckTitle == "Queued":
			queued[args.PR]++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
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
}

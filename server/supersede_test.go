package server

import (
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/store/queue"
	"github.com/perfbot/perfbot/store/storetest"
)

// TestConcurrentPushesLeaveOneComparisonForTheNewestHead is the race an
// operator found: ten synchronize deliveries of one pull request, each
// with its own head, sent at once, left five comparisons queued. Here
// four pull requests get ten pushes each (GitHub's updated_at a second
// apart), all forty deliveries shuffled and released together through
// the real webhook handler: every one is accepted, and each pull request
// is left with exactly one live comparison and one queued-check note,
// both for its newest head.
func TestConcurrentPushesLeaveOneComparisonForTheNewestHead(t *testing.T) {
	t.Parallel()
	secret := []byte("concurrent pushes")
	url, _, db := webhookServer(t, storetest.FreshPostgres(t), secret, proverRepo)
	const prs, pushes = 4, 10
	t0 := time.Date(2026, 12, 6, 9, 0, 0, 0, time.UTC)
	rng := rand.New(rand.NewPCG(36, uint64(time.Now().UnixNano())))
	newest := map[int]string{}
	var ds []signedDelivery
	for pr := 1; pr <= prs; pr++ {
		for i := range pushes {
			head := fmt.Sprintf("%016x%024x", rng.Uint64(), i)
			p := pullPayload("acme/prover", "synchronize", pr, head, false)
			p["pull_request"].(map[string]any)["updated_at"] = t0.Add(time.Duration(i) * time.Second).Format(time.RFC3339)
			ds = append(ds, signed(secret, "", fmt.Sprintf("push-%d-%d", pr, i), p))
			newest[pr] = head
		}
	}
	rng.Shuffle(len(ds), func(i, j int) { ds[i], ds[j] = ds[j], ds[i] })
	codes := make([]int, len(ds))
	errs := make([]error, len(ds))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, d := range ds {
		wg.Go(func() {
			<-start
			codes[i], _, errs[i] = d.send(url)
		})
	}
	close(start)
	wg.Wait()
	for i := range ds {
		if errs[i] != nil || codes[i] != http.StatusAccepted {
			t.Fatalf("delivery %s: %d, %v; want 202", ds[i].id, codes[i], errs[i])
		}
	}
	live := map[string]bool{"available": true, "running": true, "scheduled": true, "pending": true, "retryable": true}
	compares, notes := map[int][]string{}, map[int][]string{}
	// cancelled and ended: per pull request, the heads whose comparison a
	// newer push cancelled, and those whose check a note ends.
	cancelled, ended := map[int][]string{}, map[int][]string{}
	for _, j := range riverJobs(t, db) {
		pr := int(j.Args["pr"].(float64))
		switch {
		case j.Kind == queue.KindCompare && j.State == "cancelled":
			cancelled[pr] = append(cancelled[pr], j.Args["head_sha"].(string))
		case !live[j.State]:
		case j.Kind == queue.KindCompare:
			compares[pr] = append(compares[pr], j.Args["head_sha"].(string))
		case j.Kind == queue.KindNotify && j.Args["superseded_by"] != nil:
			ended[pr] = append(ended[pr], j.Args["check_sha"].(string))
		case j.Kind == queue.KindNotify:
			notes[pr] = append(notes[pr], j.Args["check_sha"].(string))
		}
	}
	for pr := 1; pr <= prs; pr++ {
		want := fmt.Sprint([]string{newest[pr]})
		if fmt.Sprint(compares[pr]) != want || fmt.Sprint(notes[pr]) != want {
			t.Errorf("#%d: live comparisons %v, queued-check notes %v; want %s alone in each", pr, compares[pr], notes[pr], newest[pr][:12])
		}
		slices.Sort(cancelled[pr])
		slices.Sort(ended[pr])
		if fmt.Sprint(cancelled[pr]) != fmt.Sprint(ended[pr]) {
			t.Errorf("#%d: comparisons cancelled for %v, checks ended for %v; want every cancelled head's check ended, once", pr, cancelled[pr], ended[pr])
		}
	}
}

package storetest

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/perfbot/perfbot/store"
)

func testChangeIsClaimedOnceAcrossWriters(t *testing.T, dsn string) {
	db := open(t, dsn, store.Options{})
	ctx := context.Background()
	save(t, db, baseline(sha1, 0, sample("total", "sec/op", 2.3)))
	c := store.ReportedChange{Repo: repo, Machine: "gpu-1", Key: key("msm_h", "sec/op"), Commit: sha2}

	var (
		wg     sync.WaitGroup
		claims atomic.Int32
	)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ok, err := db.ClaimChange(ctx, c)
			if err != nil {
				t.Errorf("ClaimChange: %v", err)
			}
			if ok {
				claims.Add(1)
			}
		}()
	}
	wg.Wait()
	if n := claims.Load(); n != 1 {
		t.Fatalf("%d of 8 writers claimed the change point; want 1", n)
	}
	// Another phase, machine or commit is another change point.
	for _, other := range []store.ReportedChange{
		{Repo: repo, Machine: "gpu-1", Key: key("ntt", "sec/op"), Commit: sha2},
		{Repo: repo, Machine: "gpu-2", Key: key("msm_h", "sec/op"), Commit: sha2},
		{Repo: repo, Machine: "gpu-1", Key: key("msm_h", "sec/op"), Commit: sha3},
	} {
		if ok, err := db.ClaimChange(ctx, other); err != nil || !ok {
			t.Errorf("ClaimChange(%+v) = %v, %v; want a new claim", other, ok, err)
		}
	}
	got, err := db.ReportedChanges(ctx, repo, "gpu-1")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 || got[0].ReportedAt.IsZero() {
		t.Fatalf("ReportedChanges(gpu-1) = %+v; want 3 with their times", got)
	}
	// A released claim (the comment was not posted) is claimed again.
	if err := db.ReleaseChange(ctx, c); err != nil {
		t.Fatal(err)
	}
	if ok, err := db.ClaimChange(ctx, c); err != nil || !ok {
		t.Errorf("ClaimChange after ReleaseChange = %v, %v; want true", ok, err)
	}
	// A repository without runs is an error, not "reported already".
	_, err = db.ClaimChange(ctx, store.ReportedChange{Repo: "nope", Machine: "m", Key: key("total", "sec/op"), Commit: sha1})
	if !errors.Is(err, store.ErrNotFound) {
		t.Errorf("ClaimChange of an unknown repository: %v; want store.ErrNotFound", err)
	}
}

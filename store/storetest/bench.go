package storetest

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// Benchmark measures the store's share of a comparison: saving runs of
// 10 phases × 10 units, reading 1,000 runs of history, and the whole
// store work of a 10-phase × 20-run comparison. fresh is as for Run.
func Benchmark(b *testing.B, fresh func(tb testing.TB) string) {
	ctx := context.Background()
	b.Run("SaveRun/samples=100", func(b *testing.B) {
		db := open(b, fresh(b), store.Options{})
		r := benchRun(sha1, 0, 10, 10)
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			r.StartedAt = t0.Add(time.Duration(i) * time.Second)
			if _, err := db.SaveRun(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	})

	// History over 1,000 baseline runs of 100 samples each.
	b.Run("History/runs=1000", func(b *testing.B) {
		db := open(b, fresh(b), store.Options{})
		for i := range 1000 {
			if _, err := db.SaveRun(ctx, benchRun(sha1, i, 10, 10)); err != nil {
				b.Fatal(err)
			}
		}
		keys := make([]analysis.Key, len(phases))
		for i, p := range phases {
			keys[i] = key(p, "sec/op")
		}
		for _, tc := range []struct {
			name string
			q    store.HistoryQuery
		}{
			{"keys=10/limit=30", store.HistoryQuery{Repo: repo, Machine: "gpu-1", ConfigHash: "cfg-a", Keys: keys, Limit: 30}},
			{"keys=all/limit=30", store.HistoryQuery{Repo: repo, Machine: "gpu-1", ConfigHash: "cfg-a", Limit: 30}},
			{"keys=10/limit=1000", store.HistoryQuery{Repo: repo, Machine: "gpu-1", ConfigHash: "cfg-a", Keys: keys, Limit: 1000}},
		} {
			b.Run(tc.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					h, err := db.History(ctx, tc.q)
					if err != nil {
						b.Fatal(err)
					}
					if len(h) == 0 {
						b.Fatal("empty history")
					}
				}
			})
		}
	})

	// A chart's query: one key over 1,000 baseline runs.
	b.Run("Trend/runs=1000", func(b *testing.B) {
		db := open(b, fresh(b), store.Options{})
		for i := range 1000 {
			if _, err := db.SaveRun(ctx, benchRun(sha1, i, 10, 10)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportAllocs()
		for b.Loop() {
			pts, err := db.Trend(ctx, repo, key("msm_h", "sec/op"), t0)
			if err != nil {
				b.Fatal(err)
			}
			if len(pts) != 1000 {
				b.Fatalf("Trend: %d points, want 1000", len(pts))
			}
		}
	})

	// What the store does for one pull request: save 20 base and 20 head
	// runs (10 phases × 10 units each), read them back, read the history
	// of the 10 phases' times from 1,000 baseline runs, and save the
	// comparison.
	b.Run("Comparison/phases=10/runs=20", func(b *testing.B) {
		db := open(b, fresh(b), store.Options{})
		for i := range 1000 {
			if _, err := db.SaveRun(ctx, benchRun(sha1, i, 10, 10)); err != nil {
				b.Fatal(err)
			}
		}
		keys := make([]analysis.Key, len(phases))
		for i, p := range phases {
			keys[i] = key(p, "sec/op")
		}
		b.ReportAllocs()
		for n := 0; b.Loop(); n++ {
			base, head := fmt.Sprintf("base%036d", n), fmt.Sprintf("head%036d", n)
			for i := range 20 {
				for _, sha := range []string{base, head} {
					r := benchRun(sha, 2000+n*40+i, 10, 10)
					r.Kind = store.KindCompare
					if _, err := db.SaveRun(ctx, r); err != nil {
						b.Fatal(err)
					}
				}
			}
			rs, err := db.Runs(ctx, store.RunQuery{Repo: repo, Commits: []string{base, head}, Kind: store.KindCompare, Status: analysis.StatusOK})
			if err != nil || len(rs) != 40 {
				b.Fatalf("Runs: %d runs, %v", len(rs), err)
			}
			if _, err := db.History(ctx, store.HistoryQuery{Repo: repo, Machine: "gpu-1", ConfigHash: "cfg-a", Keys: keys, Limit: 30}); err != nil {
				b.Fatal(err)
			}
			if _, err := db.SaveComparison(ctx, &store.Comparison{Repo: repo, BaseSHA: base, HeadSHA: head, Verdict: "no change",
				Report: `{"rows":[]}`, Markdown: "<!-- perfbot:summary -->\nno change\n"}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// benchRun returns an ok baseline run of sha with phases × units samples.
func benchRun(sha string, hour, nphases, nunits int) *store.RunRecord {
	r := baseline(sha, hour)
	r.Config = `{"circuit":"sha256","constraints":65536,"count":1}`
	r.Env = `{"cpu":"Intel Xeon","gpu":"NVIDIA H200","driver":"580.159.04"}`
	for p := range nphases {
		for u := range nunits {
			unit := "sec/op"
			if u > 0 {
				unit = fmt.Sprintf("counter%d/op", u)
			}
			r.Samples = append(r.Samples, sample(phases[p%len(phases)], unit, 0.1*float64(p+1)+float64(hour%7)*1e-3))
		}
	}
	return r
}

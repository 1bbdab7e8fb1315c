package dashboard_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha1"
	"database/sql"
	"encoding/json"
	"fmt"
	mrand "math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/server/dashboard"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/storetest"
)

// The dashboard's target: the front page and the compare page answer in
// at most 100 ms with 1,000,000 samples and 1,000 comparisons in
// PostgreSQL on the 2-core machine. The benchmarks below share one such
// database per process (bench1M), made by the first of them that runs
// and dropped by TestMain:
//
//   - storetest.GenerateTrendData's default history under repository
//     bench1MRepo: 400 commits × 5 runs on 3 machines over 120 days, 14
//     benchmarks × 9 phases × 4 units, 1,008,000 samples, 2,000 runs,
//     504 series;
//   - 1,000 stored comparisons spread evenly over those 120 days, each
//     with a report of analysis.Compare over 20 + 20 runs of 10 rows (one
//     benchmark's 9 phases in sec/op and its total in instructions/op),
//     and its markdown: about a tenth regressions (msm_h 8% slower), a
//     tenth improvements (ntt 6% faster), most others inconclusive. Each base is one of the generated commits; each head is a
//     pull request's commit (no runs of its own). bench1MRepeated pairs
//     were compared bench1MRepeats times each (re-runs of one head), the
//     other 900 comparisons are of pairs compared once.
const (
	bench1MRepo        = "perfbot/prover"
	bench1MComparisons = 1000
	bench1MRepeated    = 20
	bench1MRepeats     = 5
)

var bench1M struct {
	once       sync.Once
	err        error
	admin      string // PERFBOT_TEST_DATABASE_URL
	name       string // the database, dropped by TestMain
	db         *store.DB
	handler    http.Handler
	base, head string // a pair compared bench1MRepeats times
	newest     string // the newest comparison's head
	verdicts   map[string]int
	samples    int
}

// TestMain drops the benchmarks' shared database, if one was made.
func TestMain(m *testing.M) {
	code := m.Run()
	if err := dropBench1M(); err != nil {
		fmt.Fprintln(os.Stderr, "drop the benchmarks' database:", err)
		if code == 0 {
			code = 1
		}
	}
	os.Exit(code)
}

// setupBench1M returns the dashboard over the shared database, making it
// on the first call; it skips b without PostgreSQL.
func setupBench1M(b *testing.B) http.Handler {
	b.Helper()
	admin := storetest.PostgresAdmin(b)
	bench1M.once.Do(func() {
		bench1M.admin = admin
		began := time.Now()
		bench1M.err = makeBench1M(context.Background())
		if bench1M.err == nil {
			b.Logf("generated %d samples and %d comparisons (verdicts %v) in %v",
				bench1M.samples, bench1MComparisons, bench1M.verdicts, time.Since(began).Round(time.Millisecond))
		}
	})
	if bench1M.err != nil {
		b.Fatal(bench1M.err)
	}
	return bench1M.handler
}

func makeBench1M(ctx context.Context) error {
	u, err := url.Parse(bench1M.admin)
	if err != nil {
		return fmt.Errorf("PERFBOT_TEST_DATABASE_URL: %w", err)
	}
	admin, err := sql.Open("postgres", bench1M.admin)
	if err != nil {
		return err
	}
	defer admin.Close()
	name := "perfbot_bench_" + strings.ToLower(rand.Text()[:12])
	if _, err := admin.ExecContext(ctx, "CREATE DATABASE "+name); err != nil {
		return fmt.Errorf("create benchmark database: %w", err)
	}
	bench1M.name = name
	dsn := *u
	dsn.Path = "/" + name
	db, err := store.Open(ctx, dsn.String(), store.Options{})
	if err != nil {
		return err
	}
	bench1M.db = db
	d := storetest.TrendData{Repo: bench1MRepo}
	if err := storetest.GenerateTrendData(ctx, db, d); err != nil {
		return err
	}
	bench1M.samples = d.Samples()
	if err := saveBench1MComparisons(ctx, db); err != nil {
		return err
	}
	// As autovacuum would have by the time anyone looks.
	if _, err := db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		return err
	}
	bench1M.handler = dashboard.New(dashboard.Config{Store: db})
	return nil
}

func dropBench1M() error {
	if bench1M.db != nil {
		bench1M.db.Close()
	}
	if bench1M.name == "" {
		return nil
	}
	admin, err := sql.Open("postgres", bench1M.admin)
	if err != nil {
		return err
	}
	defer admin.Close()
	_, err = admin.Exec("DROP DATABASE IF EXISTS " + bench1M.name + " WITH (FORCE)")
	return err
}

// saveBench1MComparisons stores the 1,000 comparisons (see bench1MRepo),
// sets bench1M's base and head to the last repeated pair and newest to
// the newest comparison's head.
func saveBench1MComparisons(ctx context.Context, db *store.DB) error {
	// GenerateTrendData's defaults: 400 commits over the 120 days up to now.
	const commits, days = 400, 120
	end := time.Now().UTC()
	span := days * 24 * time.Hour
	step := span / bench1MComparisons
	bench1M.verdicts = map[string]int{}
	for k := range bench1MComparisons {
		// The first bench1MRepeated × bench1MRepeats comparisons are the
		// repeated pairs, each pair's comparisons a few minutes apart and
		// the pairs spread over the history; the rest are single pairs.
		pair, at, commit := k, end.Add(-span+time.Duration(k)*step), k*commits/bench1MComparisons
		if n := bench1MRepeated * bench1MRepeats; k < n {
			pair = k / bench1MRepeats
			at = end.Add(-span + time.Duration(pair)*(span/bench1MRepeated) + time.Duration(k%bench1MRepeats)*7*time.Minute)
			commit = pair * commits / bench1MRepeated
		}
		// The base is the generated commit of about the comparison's time.
		base := fmt.Sprintf("%040x", 0xface0000+commit)
		head := fmt.Sprintf("%x", sha1.Sum(fmt.Appendf(nil, "pull request head %d", pair)))
		c, err := benchComparison(k, base, head)
		if err != nil {
			return err
		}
		c.CreatedAt = at
		if _, err := db.SaveComparison(ctx, c); err != nil {
			return err
		}
		bench1M.verdicts[c.Verdict]++
		if pair == bench1MRepeated-1 {
			bench1M.base, bench1M.head = base, head
		}
		bench1M.newest = head
	}
	return nil
}

// benchComparison makes comparison k of head against base as perfbot
// compare stores one: analysis.Compare over 20 runs a side of 10 rows,
// its JSON, its markdown and the inputs' JSON. Comparison k%10 == 0 has
// msm_h 8% slower in head, k%10 == 1 ntt 6% faster.
func benchComparison(k int, base, head string) (*store.Comparison, error) {
	rng := mrand.New(mrand.NewPCG(uint64(k), 19))
	bench := storetest.TrendBenchmark(6)
	phases := []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "assemble", "total"}
	runs := func(sha string, isHead bool) []analysis.Run {
		out := make([]analysis.Run, 20)
		for i := range out {
			r := analysis.Run{Revision: sha, Status: analysis.StatusOK, Round: i + 1}
			for p, phase := range phases {
				v := 0.04 * float64(p+1)
				switch {
				case isHead && k%10 == 0 && phase == "msm_h":
					v *= 1.08
				case isHead && k%10 == 1 && phase == "ntt":
					v *= 0.94
				}
				r.Samples = append(r.Samples, analysis.Sample{Key: analysis.Key{Benchmark: bench, Phase: phase, Unit: "sec/op"},
					Value: v * (1 + 0.01*rng.NormFloat64())})
			}
			r.Samples = append(r.Samples, analysis.Sample{Key: analysis.Key{Benchmark: bench, Phase: "total", Unit: "instructions/op"},
				Value: 4.2e9 * (1 + 0.001*rng.NormFloat64())})
			out[i] = r
		}
		return out
	}
	rep := analysis.Compare(analysis.Input{BaseRev: base, HeadRev: head, Base: runs(base, false), Head: runs(head, true)}, analysis.Options{})
	var md bytes.Buffer
	if err := render.RenderMarkdown(&md, rep, render.RenderContext{}); err != nil {
		return nil, err
	}
	report, err := json.Marshal(rep)
	if err != nil {
		return nil, err
	}
	ids := make([]int, 40)
	for i := range ids {
		ids[i] = 100000 + k*40 + i
	}
	inputs, err := json.Marshal(map[string]any{"config_hash": "cfg-a", "base_runs": ids[:20], "head_runs": ids[20:],
		"machine": "gpu-1", "order": "alternate", "rounds": 20})
	if err != nil {
		return nil, err
	}
	return &store.Comparison{Repo: bench1MRepo, BaseSHA: base, HeadSHA: head, Verdict: string(rep.Verdict),
		Inputs: string(inputs), Report: string(report), Markdown: md.String()}, nil
}

// benchGet serves GET target through h until b's loop ends, failing b on
// any answer but 200, and returns the last body.
func benchGet(b *testing.B, h http.Handler, target string) string {
	b.Helper()
	var body string
	for b.Loop() {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, target, nil))
		if w.Code != http.StatusOK {
			b.Fatalf("GET %s: %d\n%s", target, w.Code, w.Body)
		}
		body = w.Body.String()
	}
	return body
}

// BenchmarkDashboardIndex1M times the front page (GET /) over the shared
// database: 1,008,000 samples and 1,000 comparisons in PostgreSQL.
// cache=warm is every load while the runs stay as they are (the series
// and the headlines come from the dashboard's cache, checked with one
// query); cache=cold is the first load after a run was stored (a new
// dashboard each time, so the series, the headlines and their change
// points are read and computed).
func BenchmarkDashboardIndex1M(b *testing.B) {
	h := setupBench1M(b)
	check := func(b *testing.B, body string) {
		for _, want := range []string{storetest.TrendBenchmark(13), bench1M.newest[:7]} {
			if !strings.Contains(body, want) {
				b.Errorf("the index does not show %s (the last benchmark, the newest comparison's head)", want)
			}
		}
	}
	b.Run("cache=warm", func(b *testing.B) { check(b, benchGet(b, h, "/")) })
	b.Run("cache=cold", func(b *testing.B) {
		var body string
		for b.Loop() {
			b.StopTimer()
			fresh := dashboard.New(dashboard.Config{Store: bench1M.db})
			b.StartTimer()
			w := httptest.NewRecorder()
			fresh.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/", nil))
			if w.Code != http.StatusOK {
				b.Fatalf("GET /: %d\n%s", w.Code, w.Body)
			}
			body = w.Body.String()
		}
		check(b, body)
	})
}

// BenchmarkDashboardCompare1M times the compare page of a pair compared
// bench1MRepeats times over the shared database, the newest comparison's
// stored report decoded and rendered: by full SHAs, as the index and the
// trend pages link it, and with the head by its 7-digit beginning, as
// people paste it (resolved with store.ResolveCommit first; the base, a
// generated commit, is unique only in full).
func BenchmarkDashboardCompare1M(b *testing.B) {
	h := setupBench1M(b)
	for _, tc := range []struct{ name, base, head string }{
		{"sha=full", bench1M.base, bench1M.head},
		{"sha=short", bench1M.base, bench1M.head[:7]},
	} {
		b.Run(tc.name, func(b *testing.B) {
			target := "/compare?" + url.Values{"repo": {bench1MRepo}, "base": {tc.base}, "head": {tc.head}}.Encode()
			body := benchGet(b, h, target)
			if !strings.Contains(body, bench1M.head[:7]) {
				b.Errorf("the compare page does not show the head %s", bench1M.head)
			}
		})
	}
}

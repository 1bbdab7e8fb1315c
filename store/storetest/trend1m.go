package storetest

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// A TrendData describes a generated history: what GenerateTrendData
// stores. The zero value of a field takes the default in brackets.
type TrendData struct {
	Repo       string    // [github.com/perfbot/perfbot]
	Machines   int       // machines taking turns by commit [3]
	Commits    int       // default-branch commits [400]
	RunsPer    int       // baseline runs of each commit [5]
	Benchmarks int       // benchmarks, each with every phase and unit [14]
	Days       int       // the history's span, ending at End [120]
	End        time.Time // the newest run's start [now]
	Writers    int       // concurrent SaveRun callers [4]
}

// trendPhases and trendUnits are the prover's nine phases and the units a
// GPU runner stores for each.
var (
	trendPhases = []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "assemble", "total"}
	trendUnits  = []string{"sec/op", "instructions/op", "page-faults/op", "gpu-sec/op"}
)

func (d TrendData) withDefaults() TrendData {
	def := func(v *int, n int) {
		if *v == 0 {
			*v = n
		}
	}
	if d.Repo == "" {
		d.Repo = repo
	}
	def(&d.Machines, 3)
	def(&d.Commits, 400)
	def(&d.RunsPer, 5)
	def(&d.Benchmarks, 14)
	def(&d.Days, 120)
	def(&d.Writers, 4)
	if d.End.IsZero() {
		d.End = time.Now().UTC().Truncate(time.Second)
	}
	return d
}

// Samples is how many samples d stores.
func (d TrendData) Samples() int {
	d = d.withDefaults()
	return d.Commits * d.RunsPer * d.Benchmarks * len(trendPhases) * len(trendUnits)
}

// TrendBenchmark names generated benchmark i.
func TrendBenchmark(i int) string {
	return fmt.Sprintf("Prove/circuit=sha256/constraints=%d/backend=gpu", 1<<(10+i))
}

// GenerateTrendData stores d's history through SaveRun, as the runner
// stores runs: Commits commits evenly spread over Days days up to End,
// each measured RunsPer times (a minute apart) on one of Machines
// machines, each run holding every benchmark × phase × unit (9 phases ×
// 4 units), values around a per-series level with 2% noise and a 10% step
// in the middle of the history. With the defaults that is 2,000 runs and
// 1,008,000 samples.
func GenerateTrendData(ctx context.Context, db *store.DB, d TrendData) error {
	d = d.withDefaults()
	span := time.Duration(d.Days) * 24 * time.Hour
	start := d.End.Add(-span)
	step := span / time.Duration(max(d.Commits-1, 1))
	type job struct{ commit, run int }
	jobs := make(chan job)
	errs := make(chan error, d.Writers)
	var wg sync.WaitGroup
	for w := range d.Writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(w), 42))
			for j := range jobs {
				sha := fmt.Sprintf("%040x", 0xface0000+j.commit)
				started := start.Add(time.Duration(j.commit)*step + time.Duration(j.run)*time.Minute)
				if started.After(d.End) {
					started = d.End
				}
				samples := make([]analysis.Sample, 0, d.Benchmarks*len(trendPhases)*len(trendUnits))
				for b := range d.Benchmarks {
					for p, phase := range trendPhases {
						for u, unit := range trendUnits {
							level := float64(b+1) * float64(p+1) * float64(u+1) * 0.01
							if j.commit >= d.Commits/2 && phase == "msm_h" {
								level *= 1.1
							}
							samples = append(samples, analysis.Sample{
								Key:   analysis.Key{Benchmark: TrendBenchmark(b), Phase: phase, Unit: unit},
								Value: level * (1 + 0.02*(2*rng.Float64()-1)),
							})
						}
					}
				}
				_, err := db.SaveRun(ctx, &store.RunRecord{
					Repo:       d.Repo,
					Commit:     store.Commit{SHA: sha, AuthorTime: started.Add(-time.Hour), Subject: fmt.Sprintf("commit %d", j.commit)},
					Kind:       store.KindBaseline,
					ConfigHash: "cfg-a",
					Machine:    fmt.Sprintf("gpu-%d", j.commit%d.Machines+1),
					StartedAt:  started,
					EndedAt:    started.Add(40 * time.Second),
					Status:     analysis.StatusOK,
					Samples:    samples,
				})
				if err != nil {
					errs <- fmt.Errorf("generate trend data: commit %d run %d: %w", j.commit, j.run, err)
					return
				}
			}
		}()
	}
	var err error
feed:
	for c := range d.Commits {
		for r := range d.RunsPer {
			select {
			case jobs <- job{c, r}:
			case err = <-errs:
				break feed
			case <-ctx.Done():
				err = ctx.Err()
				break feed
			}
		}
	}
	close(jobs)
	wg.Wait()
	close(errs)
	if err != nil {
		return err
	}
	return <-errs // nil when no writer failed
}

// BenchmarkTrend1M times Trend of one key (one benchmark's msm_h sec/op,
// every machine) over the last 90 days of GenerateTrendData's default
// history, 1,008,000 samples, in a database fresh makes. It reports the
// generation time (gen-s, once) and the median query time (median-ms).
func BenchmarkTrend1M(b *testing.B, fresh func(tb testing.TB) string) {
	ctx := context.Background()
	db := open(b, fresh(b), store.Options{})
	d := TrendData{}.withDefaults()
	began := time.Now()
	if err := GenerateTrendData(ctx, db, d); err != nil {
		b.Fatal(err)
	}
	gen := time.Since(began)
	b.Logf("generated %d samples (%d runs) in %v", d.Samples(), d.Commits*d.RunsPer, gen.Round(time.Millisecond))
	k := analysis.Key{Benchmark: TrendBenchmark(7), Phase: "msm_h", Unit: "sec/op"}
	since := d.End.Add(-90 * 24 * time.Hour)
	// Once before the table statistics exist, as right after a bulk load.
	t := time.Now()
	if _, err := db.Trend(ctx, d.Repo, k, since); err != nil {
		b.Fatal(err)
	}
	b.Logf("first Trend, before ANALYZE: %v", time.Since(t).Round(time.Microsecond))
	if _, err := db.SQL().ExecContext(ctx, "ANALYZE"); err != nil {
		b.Fatal(err)
	}
	var times []time.Duration
	var points int
	for b.Loop() {
		t := time.Now()
		ps, err := db.Trend(ctx, d.Repo, k, since)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(t))
		points = len(ps)
	}
	// 90 of 120 days: about three quarters of the runs.
	if want := d.Commits * d.RunsPer * 3 / 4; points < want-2*d.RunsPer || points > want+2*d.RunsPer {
		b.Fatalf("Trend returned %d points; want about %d", points, want)
	}
	slices.Sort(times)
	med := times[len(times)/2]
	b.ReportMetric(gen.Seconds(), "gen-s")
	b.ReportMetric(float64(med.Microseconds())/1000, "median-ms")
	b.ReportMetric(float64(points), "points")
	b.Logf("Trend over 90 days: %d points, median %v, min %v, max %v over %d queries",
		points, med, times[0], times[len(times)-1], len(times))
}

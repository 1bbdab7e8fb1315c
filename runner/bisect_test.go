package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// bisectProgram does two phases of real work, a dependent multiply-add
// chain the compiler cannot remove, and prints each phase's time and the
// total in Go benchmark format. It times with its thread's CPU clock, so
// a neighbour on the test machine's two cores does not look like a
// regression. %s is the solve phase's loop count (an expression); %s a
// statement that breaks the build when it is not empty.
const bisectProgram = `package main

import (
	"fmt"
	"runtime"
	"syscall"
	"unsafe"
)

var sink uint64

func spin(n int) {
	x := sink | 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func main() {
	runtime.LockOSThread()
	%s
	start := threadCPU()
	t := threadCPU()
	spin(1_500_000)
	fmt.Printf("BenchmarkWork/size=small/phase=parse 1 %%d ns/op\n", threadCPU()-t)
	t = threadCPU()
	spin(%s)
	fmt.Printf("BenchmarkWork/size=small/phase=solve 1 %%d ns/op\n", threadCPU()-t)
	fmt.Printf("BenchmarkWork/size=small/phase=total 1 %%d ns/op\n", threadCPU()-start)
}
`

// bisectConfig measures the program 6 times a commit (after one warm-up)
// and up to 20 when a commit is unsettled: under make test's load on 2
// cores one CI-like run judged the ends' +30% (then the planted change) "too noisy" at 10 runs a
// side (p 0.064), and a bisection that cannot tell its ends apart has
// nothing to search.
const bisectConfig = `build:
  - [go, build, -o, "${PERFBOT_OUT}/work", .]
benchmarks:
  - name: work
    command: ["${PERFBOT_OUT}/work"]
count: 6
warmup: 1
max_count: 20
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 5
`

// bisectRepo makes a repository of n commits c0 … c(n−1): from commit
// slowAt on (never when slowAt < 0) the solve phase does a third more
// work (total +22%: parse spins 1.5M times, solve 3M, then 4M), and the
// commits in broken do not compile. Each probe is judged beside its ends
// in the same rounds, so the drift of the thread CPU clock under make
// test on CI's two cores, which once made a good probe of a +33% change
// look bad when probes were judged against the ends' earlier runs, moves
// both sides alike.
// Every commit changes the program's source.
func bisectRepo(t *testing.T, n, slowAt int, broken ...int) (dir string, shas []string) {
	t.Helper()
	return bisectRepoWith(t, bisectConfig, n, slowAt, broken...)
}

// bisectRepoWith is bisectRepo with config as commit 0's .perfbot.yml
// (none when config is "").
func bisectRepoWith(t *testing.T, config string, n, slowAt int, broken ...int) (dir string, shas []string) {
	t.Helper()
	r := workspacetest.New(t)
	for i := range n {
		solve, breakIt := "3_000_000", ""
		if slowAt >= 0 && i >= slowAt {
			solve = "4_000_000"
		}
		if slices.Contains(broken, i) {
			breakIt = "undefinedFunction()"
		}
		files := map[string]string{
			"main.go": fmt.Sprintf(bisectProgram, breakIt, solve) + fmt.Sprintf("\n// commit %d\n", i),
		}
		if i == 0 {
			files["go.mod"] = "module example.com/work\n\ngo 1.26\n"
			if config != "" {
				files[".perfbot.yml"] = config
			}
		}
		msg := fmt.Sprintf("c%d: steady work", i)
		switch {
		case i == slowAt:
			msg = fmt.Sprintf("c%d: solve does a third more work", i)
		case slices.Contains(broken, i):
			msg = fmt.Sprintf("c%d: does not build", i)
		}
		shas = append(shas, r.Commit(t, msg, files))
	}
	return r.Dir, shas
}

func newBisectRunner(t *testing.T) (*Runner, *store.DB) {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return &Runner{DataDir: t.TempDir(), Store: db}, db
}

// probesOf returns the report's probes, the ends left out.
func probesOf(rep *analysis.BisectReport) []analysis.Probe {
	var out []analysis.Probe
	for _, p := range rep.Probes {
		if p.End == "" {
			out = append(out, p)
		}
	}
	return out
}

func storedRuns(t *testing.T, db *store.DB, q store.RunQuery) []store.RunRecord {
	t.Helper()
	rs, err := db.Runs(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// TestBisectFindsAPlantedRegressionAmong32CommitsWithFiveProbes is the
// issue's test: 32 commits, c0 good, c31 bad, the regression planted in
// c19. The search covers the 31 commits of c0..c31 (c31 is the bad end,
// known bad), so binary search needs ceil(log2 31) = 5 probes; the
// issue allows 6. The count: a probe is a commit of the range other than
// the bad end that the search measured; the two ends (good c0 and bad
// c31, measured first to learn what good and bad look like) are counted
// apart, and a skip would be counted apart too (there is none here).
// A second bisection of the same range then measures nothing: every
// commit it looks at has its runs in the store.
func TestBisectFindsAPlantedRegressionAmong32CommitsWithFiveProbes(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program at 7 commits and runs it about 50 times: skipped in -short mode")
	}
	// Not parallel: bisecting builds programs at its probes and times
	// them; other bisections beside it would only add runs.
	dir, shas := bisectRepo(t, 32, 19)
	r, db := newBisectRunner(t)
	var heard []analysis.Probe
	var progress int
	start := time.Now()
	res, err := r.Bisect(context.Background(), BisectRequest{
		Source: dir, Good: shas[0], Bad: "main",
		OnProbe:    func(p analysis.Probe) { heard = append(heard, p) },
		OnProgress: func(Progress) { progress++ },
	})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	t.Logf("first bisection: %s in %s", render.BisectHeadline(rep), time.Since(start).Round(time.Millisecond))
	for _, p := range rep.Probes {
		t.Logf("  step %d %s at %d: %s median %.3gs, %d reused + %d measured %s", p.Step, p.End, p.Position, p.Class, p.Median, p.Reused, p.Measured, p.Reason)
	}
	if res.FirstBad.SHA != shas[19] || res.LastGood.SHA != shas[18] || !rep.Exact() {
		t.Fatalf("first bad %s, last good %s, exact %v; want c19 %s after c18 %s",
			res.FirstBad.Short(), res.LastGood.Short(), rep.Exact(), shas[19][:12], shas[18][:12])
	}
	if rep.Key != (analysis.Key{Benchmark: "Work/size=small", Phase: "total", Unit: "sec/op"}) || rep.Order != analysis.BisectFirstParent {
		t.Errorf("searched %v in %s order; want Work/size=small total sec/op (the defaults) along the first-parent chain", rep.Key, rep.Order)
	}
	if rep.Commits != 31 || len(res.Range) != 31 || res.Range[30].SHA != shas[31] {
		t.Errorf("range of %d commits ending %s; want c1 … c31", rep.Commits, res.Range[len(res.Range)-1].Short())
	}
	if rep.Change.Verdict != analysis.VerdictRegression || rep.Change.Change() < 12 || rep.Change.Change() > 35 {
		t.Errorf("the ends' change: %s %+.1f%%; want a regression near +22%%", rep.Change.Verdict, rep.Change.Change())
	}
	probes := probesOf(rep)
	if n := rep.MeasuredProbes(); n > 6 || len(probes) > 6 || len(rep.Skipped()) != 0 {
		t.Errorf("%d probes (%d measured, %d skipped); want at most 6 and no skip", len(probes), n, len(rep.Skipped()))
	}
	for _, p := range probes {
		want := analysis.ProbeGood
		if p.Position >= 19 {
			want = analysis.ProbeBad
		}
		if p.Class != want || p.Commit.SHA != shas[p.Position] {
			t.Errorf("step %d: c%d classed %s (commit %s); want %s", p.Step, p.Position, p.Class, p.Commit.SHA[:12], want)
		}
		if p.Runs < 6 || p.Measured < p.Runs || p.Reused != 0 || p.VsGood == nil || p.VsBad == nil {
			t.Errorf("step %d: judged on %d rounds, %d measured, %d reused, comparisons %v %v; want 6 or more rounds measured now, compared with both ends",
				p.Step, p.Runs, p.Measured, p.Reused, p.VsGood != nil, p.VsBad != nil)
		}
	}
	if len(heard) != len(rep.Probes) || heard[0].End != "good" || heard[1].End != "bad" || progress < res.Measured {
		t.Errorf("OnProbe heard %d probes (report has %d), OnProgress %d calls for %d runs", len(heard), len(rep.Probes), progress, res.Measured)
	}
	c := rep.Comparison
	if c == nil || c.Base != shas[18] || c.Head != shas[19] || c.Verdict != analysis.VerdictRegression || res.ComparisonID == 0 {
		t.Fatalf("comparison %+v (id %d); want c19 against c18, a regression, stored", c, res.ComparisonID)
	}
	for _, row := range c.Phases {
		if row.Phase == "solve" && row.Verdict != analysis.VerdictRegression {
			t.Errorf("solve in c19 against c18: %s %+.1f%%; want the regression", row.Verdict, row.Change())
		}
	}
	// The change in total is solve's. parse did not change, but its own
	// verdict is a test at α = 0.05 on six timings a side, with the other
	// packages' tests on the same two cores: it once read −6.9% here, so
	// the check is on sizes, not on parse's verdict. solve's extra work is
	// a quarter of the head's total and parse a sixth: a full-suite run
	// once saw parse's median move +31.6%, which at parse's earlier size
	// (as large as solve's base) was more than half of solve's change; at
	// a sixth of the total that noise is a third of it.
	var shares []analysis.PhaseShare
	for _, a := range c.Attribution {
		if a.Benchmark == "Work/size=small" && a.Unit == "sec/op" {
			shares = a.Phases
		}
	}
	if len(shares) != 2 || shares[0].Phase != "solve" || shares[1].Phase != "parse" ||
		math.Abs(shares[1].Delta) > shares[0].Delta/2 {
		t.Errorf("attribution of c19 against c18: %+v; want solve's change first and parse's under half of it", shares)
	}
	wantCmd := fmt.Sprintf("perfbot compare --repo %s --base %s --head %s --count 6", dir, shas[18], shas[19])
	if len(rep.Reproduce) == 0 || rep.Reproduce[0] != wantCmd {
		t.Errorf("reproduce %q; want %q first", rep.Reproduce, wantCmd)
	}

	// Every run is stored as a bisect run, none as baseline history.
	bisectRuns := storedRuns(t, db, store.RunQuery{Kind: store.KindBisect})
	if len(bisectRuns) != res.Measured || res.Reused != 0 {
		t.Errorf("%d bisect runs stored, %d measured, %d reused; want every measured run stored, none reused", len(bisectRuns), res.Measured, res.Reused)
	}
	if hist, err := db.History(context.Background(), store.HistoryQuery{Repo: dir}); err != nil || len(hist) != 0 {
		t.Errorf("baseline history %v, %v; want none: bisect runs are not history", hist, err)
	}

	// Again: the same answer from the stored runs alone.
	again, err := r.Bisect(context.Background(), BisectRequest{Source: dir, Good: shas[0], Bad: shas[31]})
	if err != nil {
		t.Fatal(err)
	}
	// Its steps meet the first one's rounds, in which the commits each
	// step compares ran beside each other, so it takes the same path.
	if again.Measured != 0 || again.Reused != res.Measured || again.FirstBad.SHA != shas[19] || !again.Report.Exact() {
		t.Errorf("second bisection: %d measured, %d reused (of %d), first bad %s, exact %v; want nothing measured, every run reused, c19",
			again.Measured, again.Reused, res.Measured, again.FirstBad.Short(), again.Report.Exact())
	}
	if n := len(storedRuns(t, db, store.RunQuery{})); n != len(bisectRuns) {
		t.Errorf("%d runs stored after the second bisection, %d before; want no new run", n, len(bisectRuns))
	}
}

// TestBisectStepsAroundCommitsThatDoNotBuild: a broken commit at the
// middle is skipped and its neighbour probed instead, and the answer is
// still exact; when the first bad commit itself does not build, the
// answer is the range of candidates it leaves.
func TestBisectStepsAroundCommitsThatDoNotBuild(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go program at several commits: skipped in -short mode")
	}
	// Not parallel, as TestBisectFindsAPlantedRegressionAmong32CommitsWithFiveProbes,
	// and neither are its two cases beside each other.
	t.Run("exact", func(t *testing.T) {
		// c1 … c11: the middle is c5, which does not build; c4 is
		// probed beside it, then c7, c9 and c8.
		dir, shas := bisectRepo(t, 12, 8, 5)
		r, _ := newBisectRunner(t)
		res, err := r.Bisect(context.Background(), BisectRequest{Source: dir, Good: shas[0], Bad: shas[11]})
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		sk := rep.Skipped()
		if res.FirstBad.SHA != shas[8] || res.LastGood.SHA != shas[7] || !rep.Exact() {
			t.Errorf("first bad %s after %s, exact %v; want c8 after c7", res.FirstBad.Short(), res.LastGood.Short(), rep.Exact())
		}
		if len(sk) != 1 || sk[0].Commit.SHA != shas[5] || !strings.Contains(sk[0].Reason, "build failed") || sk[0].Measured != 0 {
			t.Fatalf("skipped %+v; want c5 alone, its build failed, nothing measured", sk)
		}
		if p := probesOf(rep); len(p) < 2 || p[1].Position != 4 {
			t.Errorf("probes %+v; want c4, beside the broken middle, probed second", p)
		}
		if !slices.ContainsFunc(rep.Warnings, func(w string) bool { return strings.Contains(w, "skipped") }) {
			t.Errorf("warnings %q do not mention the skip", rep.Warnings)
		}
		if n := rep.MeasuredProbes(); n > 4 {
			t.Errorf("%d measured probes for 11 commits; want at most 4 (ceil(log2 11)) besides the skip", n)
		}
	})
	t.Run("range", func(t *testing.T) {
		// c1 … c15: c7, the middle, and c9, the first bad, do not build.
		// c6 is probed beside c7, then c10 (bad) and c8 (good): c9 is
		// all that is left, and it is skipped.
		dir, shas := bisectRepo(t, 16, 9, 7, 9)
		r, _ := newBisectRunner(t)
		res, err := r.Bisect(context.Background(), BisectRequest{Source: dir, Good: shas[0], Bad: shas[15]})
		if err != nil {
			t.Fatal(err)
		}
		rep := res.Report
		if rep.Exact() || res.LastGood.SHA != shas[8] || res.FirstBad.SHA != shas[10] {
			t.Fatalf("exact %v, last good %s, first bad %s; want a range after c8 up to c10", rep.Exact(), res.LastGood.Short(), res.FirstBad.Short())
		}
		var cands []string
		for _, c := range rep.Candidates {
			cands = append(cands, c.SHA)
		}
		if !slices.Equal(cands, []string{shas[9], shas[10]}) {
			t.Errorf("candidates %v; want c9 (skipped) and c10", cands)
		}
		var skipped []int
		for _, p := range rep.Skipped() {
			skipped = append(skipped, p.Position)
		}
		if !slices.Equal(skipped, []int{7, 9}) {
			t.Errorf("skipped positions %v; want c7 and c9", skipped)
		}
		if h := render.BisectHeadline(rep); !strings.Contains(h, "one of 2") {
			t.Errorf("headline %q does not say the answer is a range", h)
		}
	})
}

func TestBisectOfEndsThatDoNotDifferSaysSoWithTheNumbers(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs a Go program: skipped in -short mode")
	}
	// Not parallel, as TestBisectFindsAPlantedRegressionAmong32CommitsWithFiveProbes.
	// The ends run the same program, so the verdict is an A/A test: at a
	// 5% floor a clean-clone CI run here once found them different (6
	// runs a side, other tests sharing the two cores). What is tested is
	// the error that says so, so the floor is 20%: a drift of the
	// machine is not near it.
	config := strings.Replace(bisectConfig, "min_change_pct: 5", "min_change_pct: 20", 1)
	dir, shas := bisectRepoWith(t, config, 4, -1)
	r, db := newBisectRunner(t)
	_, err := r.Bisect(context.Background(), BisectRequest{Source: dir, Good: shas[0], Bad: shas[3]})
	if !errors.Is(err, ErrNothingToBisect) {
		t.Fatalf("error %v; want ErrNothingToBisect", err)
	}
	for _, want := range []string{shas[0][:12], shas[3][:12], "Work/size=small/phase=total sec/op", "do not differ", "p=", "→", "floor 20.0%", "perfbot compare --base"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not say %q", err, want)
		}
	}
	// The ends' runs are kept for the next attempt; nothing else ran.
	for _, rec := range storedRuns(t, db, store.RunQuery{}) {
		if rec.Commit.SHA != shas[0] && rec.Commit.SHA != shas[3] {
			t.Errorf("a run of %s was stored; only the ends should have run", rec.Commit.SHA[:12])
		}
	}
}

func TestBisectBadInputIsRefusedBeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	c0 := repo.Commit(t, "base", map[string]string{".perfbot.yml": valueConfig(6), "value": "1000\n"})
	c1 := repo.Commit(t, "slower", map[string]string{"value": "1300\n"})
	r, db := newBisectRunner(t)
	for _, tc := range []struct {
		req  BisectRequest
		is   error
		want string
	}{
		{BisectRequest{Source: repo.Dir, Good: "nope", Bad: c1}, workspace.ErrUnknownRevision, `good revision: resolve "nope"`},
		{BisectRequest{Source: repo.Dir, Good: c0, Bad: "v9"}, workspace.ErrUnknownRevision, `bad revision: resolve "v9"`},
		{BisectRequest{Source: repo.Dir, Good: c1, Bad: c0}, workspace.ErrNotAncestor, "is not an ancestor"},
		{BisectRequest{Source: repo.Dir, Good: c1, Bad: "main"}, ErrEmptyRange, "give a good revision older than the bad one"},
		{BisectRequest{Source: repo.Dir, Good: "", Bad: c1}, nil, "no good revision given"},
	} {
		_, err := r.Bisect(context.Background(), tc.req)
		if err == nil || (tc.is != nil && !errors.Is(err, tc.is)) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Bisect(good %q, bad %q) = %v; want %v saying %q", tc.req.Good, tc.req.Bad, err, tc.is, tc.want)
		}
	}
	if rs := storedRuns(t, db, store.RunQuery{}); len(rs) != 0 {
		t.Errorf("bad input stored %d runs", len(rs))
	}
	// A series the runs do not measure is named, with what they do.
	_, err := r.Bisect(context.Background(), BisectRequest{Source: repo.Dir, Good: c0, Bad: c1, Phase: "msm_h"})
	if !errors.Is(err, ErrUnknownSeries) || !strings.Contains(err.Error(), `no phase "msm_h" in sec/op`) || !strings.Contains(err.Error(), "X/phase=total sec/op") {
		t.Errorf("unknown phase: %v; want ErrUnknownSeries naming what the runs measure", err)
	}
	_, err = r.Bisect(context.Background(), BisectRequest{Source: repo.Dir, Good: c0, Bad: c1, Benchmark: "Y"})
	if !errors.Is(err, ErrUnknownSeries) || !strings.Contains(err.Error(), `no benchmark Y with phase "total" in sec/op`) || !strings.Contains(err.Error(), "X/phase=a sec/op") {
		t.Errorf("unknown benchmark: %v; want ErrUnknownSeries naming what the runs measure", err)
	}
}

// TestBisectShellRangeFindsTheStepAndReusesStoredRuns is a fast search
// with an sh benchmark: the values of one phase step up at c5, and a
// benchmark that the key does not need stops running once a run shows
// which one measures it. Stored runs count only where they ran beside
// what they are compared with: a baseline of c4, measured alone, does
// not; the rounds of a first bisection do, for a second one.
func TestBisectShellRangeFindsTheStepAndReusesStoredRuns(t *testing.T) {
	// Not parallel, as TestBisectFindsAPlantedRegressionAmong32CommitsWithFiveProbes.
	repo := workspacetest.New(t)
	other, _ := json.Marshal(`echo "BenchmarkOther 1 5 ns/op"`)
	// valueConfig's benchmark "sh", after one the key does not need.
	cfg := strings.Replace(valueConfig(6), "benchmarks:\n", "benchmarks:\n  - name: other\n    command: [sh, -c, "+string(other)+"]\n", 1)
	var shas []string
	for i := range 9 {
		v := 1000
		if i >= 5 {
			v = 1200
		}
		files := map[string]string{"value": fmt.Sprintf("%d\n", v), "n": fmt.Sprint(i)}
		if i == 0 {
			files[".perfbot.yml"] = cfg
		}
		shas = append(shas, repo.Commit(t, fmt.Sprintf("c%d", i), files))
	}
	r, db := newBisectRunner(t)
	// A baseline of c4 is in the store before: the bisection reuses it.
	if _, err := r.Baseline(context.Background(), BaselineRequest{Source: repo.Dir, Rev: shas[4], Count: 6}); err != nil {
		t.Fatal(err)
	}
	res, err := r.Bisect(context.Background(), BisectRequest{Source: repo.Dir, Good: shas[0], Bad: shas[8], Phase: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstBad.SHA != shas[5] || res.LastGood.SHA != shas[4] {
		t.Fatalf("first bad %s after %s; want c5 after c4", res.FirstBad.Short(), res.LastGood.Short())
	}
	for _, p := range res.Report.Probes {
		if p.Position == 4 && (p.Reused != 0 || p.Measured < 6) {
			t.Errorf("c4: %d reused, %d measured; want its baseline runs, measured alone, left out and 6 or more measured", p.Reused, p.Measured)
		}
	}
	again, err := r.Bisect(context.Background(), BisectRequest{Source: repo.Dir, Good: shas[0], Bad: shas[8], Phase: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if again.FirstBad.SHA != shas[5] || !again.Report.Exact() || again.Measured != 0 || again.Reused < res.Measured/2 {
		t.Errorf("second bisection: first bad %s, exact %v, %d measured, %d reused; want c5 again from the first one's rounds alone (%d runs)",
			again.FirstBad.Short(), again.Report.Exact(), again.Measured, again.Reused, res.Measured)
	}
	// "other" ran only in the ends' first rounds, before a run showed
	// that "sh" measures X/phase=a: 1 run of each end.
	others := 0
	for _, rec := range storedRuns(t, db, store.RunQuery{Kind: store.KindBisect}) {
		for _, s := range rec.Samples {
			if s.Benchmark == "Other" {
				others++
			}
		}
	}
	if others > 2 {
		t.Errorf("the benchmark the key does not need ran %d times; want it dropped after the first round", others)
	}
}

// TestBisectAllCommitsFindsTheCommitOnAMergedBranch: the slowdown came
// in on a branch. Along the first-parent chain the first bad commit is
// the merge; with AllCommits it is the branch's commit itself.
func TestBisectAllCommitsFindsTheCommitOnAMergedBranch(t *testing.T) {
	// Not parallel, as TestBisectFindsAPlantedRegressionAmong32CommitsWithFiveProbes.
	repo := workspacetest.New(t)
	c0 := repo.Commit(t, "c0", map[string]string{".perfbot.yml": valueConfig(6), "value": "1000\n"})
	repo.Commit(t, "c1", map[string]string{"n": "1"})
	repo.Git(t, "switch", "--quiet", "-c", "feature")
	repo.Commit(t, "f1", map[string]string{"f": "1"})
	f2 := repo.Commit(t, "f2: slower", map[string]string{"value": "1300\n"})
	repo.Commit(t, "f3", map[string]string{"f": "3"})
	repo.Git(t, "switch", "--quiet", "main")
	repo.Git(t, "merge", "--quiet", "--no-ff", "-m", "merge feature", "feature")
	merge := repo.Git(t, "rev-parse", "HEAD")
	c5 := repo.Commit(t, "c5", map[string]string{"n": "5"})
	r, _ := newBisectRunner(t)

	res, err := r.Bisect(context.Background(), BisectRequest{Source: repo.Dir, Good: c0, Bad: c5, Phase: "a"})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstBad.SHA != merge || len(res.Range) != 3 || res.Report.Order != analysis.BisectFirstParent {
		t.Errorf("first-parent: first bad %s of %d commits; want the merge of 3 (c1, merge, c5)", res.FirstBad.Short(), len(res.Range))
	}
	all, err := r.Bisect(context.Background(), BisectRequest{Source: repo.Dir, Good: c0, Bad: c5, Phase: "a", AllCommits: true})
	if err != nil {
		t.Fatal(err)
	}
	if all.FirstBad.SHA != f2 || len(all.Range) != 6 || all.Report.Order != analysis.BisectAllCommits {
		t.Errorf("all commits: first bad %s (%s) of %d commits; want f2 of 6", all.FirstBad.Short(), all.FirstBad.Subject, len(all.Range))
	}
	if cmds := all.Report.Reproduce; len(cmds) < 2 || !strings.HasSuffix(cmds[1], " --all-commits") {
		t.Errorf("reproduce %q; want the bisect command with --all-commits", cmds)
	}
}

// driftBench prints one value a run: the commit's value file times the
// machine's level, with ±1% of noise that depends on the run's number
// alone. The level counts the runs in $DRIFT/count (every run counts,
// warm-ups included): with DRIFT_STEP it steps up by a fifth once they
// pass $DRIFT_AFTER; with DRIFT_RAMP it grows by 0.2% a run. A shell
// program, so that the values, and so the test, do not depend on how
// busy the test machine is.
const driftBench = `n=$(cat "$DRIFT/count" 2>/dev/null || echo 0); n=$((n + 1)); echo $n > "$DRIFT/count"
v=$(cat value); lvl=1000
if [ -n "$DRIFT_RAMP" ]; then lvl=$((1000 + 2 * n)); elif [ $n -gt $DRIFT_AFTER ]; then lvl=1200; fi
noise=$(( (n * 7919) % 21 - 10 ))
echo "BenchmarkX/phase=total 1 $(( v * lvl / 1000 * (1000 + noise) / 1000 )) ns/op"`

// driftRepo makes 16 commits c0 … c15 whose value is 100000, and 110000
// (+10%) from c9 on; c0's config runs driftBench with env (DRIFT_AFTER
// and DRIFT_RAMP) and, when paired, judges by rounds' ratios.
func driftRepo(t *testing.T, env string, paired bool) (dir string, shas []string) {
	t.Helper()
	b, _ := json.Marshal(driftBench)
	cfg := fmt.Sprintf("build:\n  - [\"true\"]\nbenchmarks:\n  - name: sh\n    command: [sh, -c, %s]\n    env: {DRIFT: %q, %s}\n"+
		"count: 6\nwarmup: 1\nmax_count: 20\ntimeout: 30s\nthresholds:\n  alpha: 0.01\n  min_change_pct: 3\n  paired: %v\n", b, t.TempDir(), env, paired)
	repo := workspacetest.New(t)
	for i := range 16 {
		v := 100000
		if i >= 9 {
			v = 110000
		}
		files := map[string]string{"value": fmt.Sprintf("%d\n", v), "n": fmt.Sprint(i)}
		if i == 0 {
			files[".perfbot.yml"] = cfg
		}
		shas = append(shas, repo.Commit(t, fmt.Sprintf("c%d", i), files))
	}
	return repo.Dir, shas
}

// TestBisectOnAMachineThatDriftsNamesTheRightCommitOrSaysItCannotTell:
// the machine drifts by more than the change searched for (+10% at c9),
// slowly (0.2% a run, +40% over the bisection) or at once (+20% after
// 40 runs, in the middle of the first probe's rounds). A probe judged
// against the ends' earlier runs looks bad whatever it is (the bisection
// before this test named c8 exactly with the step); one judged beside
// the ends, in the same rounds, does not. The answer is c9, never
// another commit as exact; only a step in the middle of a probe's
// rounds judged unpaired may leave a range, which must hold c9.
func TestBisectOnAMachineThatDriftsNamesTheRightCommitOrSaysItCannotTell(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name        string
		env         string
		paired      bool
		exactNeeded bool
	}{
		{"ramp", `DRIFT_RAMP: "1", DRIFT_AFTER: "0"`, false, true},
		{"step, paired", `DRIFT_AFTER: "40"`, true, true},
		{"step", `DRIFT_AFTER: "40"`, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			dir, shas := driftRepo(t, tc.env, tc.paired)
			r, _ := newBisectRunner(t)
			res, err := r.Bisect(context.Background(), BisectRequest{Source: dir, Good: shas[0], Bad: shas[15], Seed: 1})
			if err != nil {
				t.Fatal(err)
			}
			rep := res.Report
			for _, p := range rep.Probes {
				t.Logf("  step %d %s at c%d: %s median %.6g, %d runs %s", p.Step, p.End, p.Position, p.Class, p.Median, p.Runs, p.Reason)
			}
			t.Logf("%s", render.BisectHeadline(rep))
			if rep.Exact() && res.FirstBad.SHA != shas[9] {
				t.Fatalf("named %s (%s) as the first bad commit, exactly; want c9, or a range that holds it", res.FirstBad.Short(), res.FirstBad.Subject)
			}
			if !rep.Exact() && !slices.ContainsFunc(rep.Candidates, func(c analysis.BisectCommit) bool { return c.SHA == shas[9] }) {
				t.Fatalf("candidates %v lack c9", rep.Candidates)
			}
			if tc.exactNeeded && !rep.Exact() {
				t.Errorf("not exact (%d candidates); want c9 exactly: every probe was measured beside its ends", len(rep.Candidates))
			}
		})
	}
}

package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/github/githubtest"
	"github.com/perfbot/perfbot/runner"
	"github.com/perfbot/perfbot/store"
)

// changeEnv is a real SQLite store and the GitHub fake, and a series of
// default-branch commits pushed one by one.
type changeEnv struct {
	db       *store.DB
	srv      *githubtest.Server
	reporter *changeReporter
	cfg      changePointConfig
	rng      *rand.Rand
	t0       time.Time
	shas     []string
	// hour, when set, is the hour after t0 at which commit i is measured
	// (default i).
	hour func(i int) int
}

const (
	changeRepo   = "acme/prover"
	changeStored = "https://github.com/acme/prover.git"
	changeBench  = "Prove/circuit=sha256/constraints=65536/backend=gpu"
	// changeConfig is the server config's config: file the baselines were
	// measured with; the printed bisect passes it, quoted.
	changeConfig = "/etc/perfbot/acme prover.yml"
)

func newChangeEnv(t *testing.T, n int) *changeEnv {
	t.Helper()
	db, err := store.Open(context.Background(), filepath.Join(t.TempDir(), "perfbot.db"), store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	srv := githubtest.New(t)
	gh, err := github.New(github.Options{BaseURL: srv.URL() + "/", Token: githubtest.DefaultToken})
	if err != nil {
		t.Fatal(err)
	}
	cfg := changePointConfig{Report: true}
	if bad := cfg.check(); bad != nil {
		t.Fatal(bad)
	}
	e := &changeEnv{db: db, srv: srv, cfg: cfg, rng: rand.New(rand.NewPCG(7, 11)),
		t0: time.Date(2026, 10, 1, 0, 0, 0, 0, time.UTC)}
	for i := range n {
		e.shas = append(e.shas, fmt.Sprintf("%040x", 0xc0ffee00+i))
	}
	e.reporter = &changeReporter{store: db, gh: gh, log: slog.New(slog.NewTextHandler(io.Discard, nil)),
		now: func() time.Time { return e.t0.Add(time.Duration(n+1) * time.Hour) }}
	return e
}

// push stores 3 baseline runs of commit i on gpu-1: msm_h steps from
// 150 ms to 175 ms at commit step (never when step < 0), ntt is noise
// only, synthesis has a single spike at commit spike; then, when e.cfg
// says to report, it runs the reporter as the baseline worker does.
func (e *changeEnv) push(t *testing.T, i, step, spike int) (int, error) {
	t.Helper()
	noise := func(v, frac float64) float64 { return v * (1 + frac*(2*e.rng.Float64()-1)) }
	for r := range 3 {
		msm := 0.150
		if step >= 0 && i >= step {
			msm = 0.175
		}
		syn := 0.800
		if i == spike {
			syn = 1.2
		}
		h := i
		if e.hour != nil {
			h = e.hour(i)
		}
		start := e.t0.Add(time.Duration(h)*time.Hour + time.Duration(r)*time.Minute)
		_, err := e.db.SaveRun(context.Background(), &store.RunRecord{
			Repo: changeStored, Commit: store.Commit{SHA: e.shas[i], Subject: fmt.Sprintf("c%d", i)},
			Kind: store.KindBaseline, ConfigHash: "cfg", Machine: "gpu-1",
			StartedAt: start, EndedAt: start.Add(time.Second), Status: analysis.StatusOK,
			Samples: []analysis.Sample{
				{Key: analysis.Key{Benchmark: changeBench, Phase: "msm_h", Unit: "sec/op"}, Value: noise(msm, 0.005)},
				{Key: analysis.Key{Benchmark: changeBench, Phase: "ntt", Unit: "sec/op"}, Value: noise(0.006, 0.01)},
				{Key: analysis.Key{Benchmark: changeBench, Phase: "synthesis", Unit: "sec/op"}, Value: noise(syn, 0.005)},
				{Key: analysis.Key{Benchmark: changeBench, Phase: "synthesis", Unit: "page-faults/op"}, Value: 41 + float64(i)},
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if !e.cfg.Report {
		return 0, nil
	}
	return e.reporter.report(context.Background(), e.cfg, e.pushed(i))
}

// pushed is commit i pushed, with the history up to it.
func (e *changeEnv) pushed(i int) pushedBaseline {
	p := pushedBaseline{Repo: changeRepo, StoredRepo: changeStored, Machine: "gpu-1", SHA: e.shas[i], ConfigPath: changeConfig}
	for j := range i + 1 {
		p.History = append(p.History, analysis.HistoryCommit{SHA: e.shas[j], Subject: fmt.Sprintf("c%d", j)})
	}
	return p
}

func TestChangePointIsReportedOnceOnItsCommit(t *testing.T) {
	t.Parallel()
	const n, step, spike = 30, 18, 25
	e := newChangeEnv(t, n)
	reportedAt := -1
	for i := range n {
		posted, err := e.push(t, i, step, spike)
		if err != nil {
			t.Fatalf("push c%d: %v", i, err)
		}
		if posted > 0 {
			if reportedAt >= 0 {
				t.Errorf("push c%d posted %d more comments; the change at c%d was reported after push c%d", i, posted, step, reportedAt)
			}
			reportedAt = i
		}
	}
	// Found once there are min_segment commits after the step.
	if reportedAt != step+defaultChangeMinSeg-1 {
		t.Errorf("reported after push c%d; want c%d, the first push with %d commits after the step", reportedAt, step+defaultChangeMinSeg-1, defaultChangeMinSeg)
	}
	if got := e.srv.AllCommitComments("acme", "prover"); got != 1 {
		t.Fatalf("%d commit comments; want 1", got)
	}
	cs := e.srv.CommitComments("acme", "prover", e.shas[step])
	if len(cs) != 1 {
		t.Fatalf("%d comments on c%d, the step; want 1", len(cs), step)
	}
	body := cs[0].Body
	for _, want := range []string{
		changeMarker(e.shas[step]),
		"| `" + changeBench + "` | msm_h | 149.",
		"ms | 175.",
		"ms | +16.",
		"(regression) |",
		"Baseline runs on machine `gpu-1`; change points by E-Divisive means over the last 90d (α 0.01, at least 5 commits a side, changes of 5.0% or more)",
		"perfbot trend --repo " + changeStored + " --machine gpu-1 --benchmark " + changeBench + " --phase msm_h --since 90d\n",
		"perfbot bisect --repo " + changeStored + " --good " + e.shas[step-1] + " --bad " + e.shas[step] + " --benchmark " + changeBench +
			" --phase msm_h --config '" + changeConfig + "'\n",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("comment lacks %q:\n%s", want, body)
		}
	}
	// Noise (ntt), a single spike (synthesis) and other units are not reported.
	for _, not := range []string{"| ntt |", "| synthesis |", "page-faults"} {
		if strings.Contains(body, not) {
			t.Errorf("comment reports %q:\n%s", not, body)
		}
	}
	// Running the reporter again over the same runs reports nothing new.
	posted, err := e.reporter.report(context.Background(), e.cfg, e.pushed(n-1))
	if err != nil || posted != 0 {
		t.Errorf("re-run: posted %d, err %v; want nothing", posted, err)
	}
	rc, err := e.db.ReportedChanges(context.Background(), changeStored, "gpu-1")
	if err != nil || len(rc) != 1 || rc[0].Commit != e.shas[step] || rc[0].Key.Phase != "msm_h" {
		t.Errorf("stored reports %+v, %v; want msm_h at c%d", rc, err, step)
	}
}

func TestChangePointNotPostedIsReportedAfterTheNextPush(t *testing.T) {
	t.Parallel()
	const n, step = 16, 8
	e := newChangeEnv(t, n)
	for i := range step + defaultChangeMinSeg - 1 {
		if posted, err := e.push(t, i, step, -1); err != nil || posted != 0 {
			t.Fatalf("push c%d: posted %d, %v; want nothing yet", i, posted, err)
		}
	}
	// GitHub fails the comment: the push reports the error and keeps no claim.
	e.srv.Fail("POST", "/repos/acme/prover/commits/", 1, githubtest.Fault{Status: 502})
	if posted, err := e.push(t, step+defaultChangeMinSeg-1, step, -1); err == nil || posted != 0 {
		t.Fatalf("failed post: posted %d, err %v; want an error", posted, err)
	}
	if rc, _ := e.db.ReportedChanges(context.Background(), changeStored, "gpu-1"); len(rc) != 0 {
		t.Fatalf("claims kept after a failed post: %+v", rc)
	}
	posted, err := e.push(t, step+defaultChangeMinSeg, step, -1)
	if err != nil || posted != 1 {
		t.Fatalf("next push: posted %d, err %v; want the change point", posted, err)
	}
	if cs := e.srv.CommitComments("acme", "prover", e.shas[step]); len(cs) != 1 {
		t.Errorf("%d comments on the step's commit; want 1", len(cs))
	}
}

func TestChangePointsConfigDefaultsOffAndChecksValues(t *testing.T) {
	var c changePointConfig
	if bad := c.check(); bad != nil || c.Report || c.window != 90*24*time.Hour || c.MinChange != 0.05 || c.Alpha != 0.01 || c.MinSegment != 5 || c.Recent != 10 {
		t.Errorf("defaults: %+v, %v", c, bad)
	}
	c = changePointConfig{Window: "2026-01-01", MinChange: 5, Alpha: 2, MinSegment: 1, Recent: -1}
	bad := strings.Join(c.check(), "\n")
	for _, want := range []string{`window "2026-01-01": want a duration`, "min_change 5: a fraction", "alpha 2:", "min_segment 1:", "recent -1:"} {
		if !strings.Contains(bad, want) {
			t.Errorf("problems lack %q:\n%s", want, bad)
		}
	}
	c = changePointConfig{Window: "12w"}
	if bad := c.check(); bad != nil || c.window != 12*7*24*time.Hour {
		t.Errorf("window 12w: %v, %v", c.window, bad)
	}
}

func TestBaselineWorkerReportsChangePointsOnlyWhenConfigured(t *testing.T) {
	t.Parallel()
	const n, step = 14, 6
	e := newChangeEnv(t, n)
	e.cfg.Report = false // runs stored, nothing reported
	for i := range n - 1 {
		if _, err := e.push(t, i, step, -1); err != nil {
			t.Fatal(err)
		}
	}
	gh, err := github.New(github.Options{BaseURL: e.srv.URL() + "/", Token: githubtest.DefaultToken})
	if err != nil {
		t.Fatal(err)
	}
	res := &runner.BaselineResult{Repo: changeStored, Machine: "gpu-1"}
	res.Commit.SHA = e.shas[n-2]
	for _, tc := range []struct {
		name    string
		changes map[string]changePointConfig
		want    int
	}{
		{"repository not configured", nil, 0},
		{"report: false (the default)", map[string]changePointConfig{changeRepo: {}}, 0},
		{"report: true", map[string]changePointConfig{changeRepo: e.cfg}, 1},
	} {
		if tc.changes != nil {
			cfg := tc.changes[changeRepo]
			cfg.Report = tc.name == "report: true"
			cfg.check()
			tc.changes[changeRepo] = cfg
		}
		w := &baselineWorker{jobDeps: &jobDeps{store: e.db, gh: gh, log: e.reporter.log, changes: tc.changes}}
		w.reportChanges(context.Background(), changeRepo, res)
		if got := e.srv.AllCommitComments("acme", "prover"); got != tc.want {
			t.Errorf("%s: %d commit comments; want %d", tc.name, got, tc.want)
		}
	}
	if cs := e.srv.CommitComments("acme", "prover", e.shas[step]); len(cs) != 1 {
		t.Errorf("%d comments on the step's commit; want 1", len(cs))
	}
}

func TestChangePointFollowsTheBranchOrderNotTheRunOrder(t *testing.T) {
	t.Parallel()
	const n, step, filled = 20, 12, 8
	e := newChangeEnv(t, n)
	// Commits filled..n−1 were measured as pushed; commits 0..filled−1
	// were backfilled afterwards, so their runs are the newest.
	e.hour = func(i int) int {
		if i < filled {
			return n + i
		}
		return i
	}
	e.cfg.Report = false
	for i := filled; i < n; i++ {
		e.push(t, i, step, -1)
	}
	for i := range filled {
		e.push(t, i, step, -1)
	}
	e.reporter.now = func() time.Time { return e.t0.Add(time.Duration(2*n) * time.Hour) }
	e.cfg.Report = true
	posted, err := e.reporter.report(context.Background(), e.cfg, e.pushed(n-1))
	if err != nil || posted != 1 {
		t.Fatalf("posted %d, err %v; want the step", posted, err)
	}
	if cs := e.srv.CommitComments("acme", "prover", e.shas[step]); len(cs) != 1 {
		t.Errorf("%d comments on c%d, the step; want 1 (of %d in all)", len(cs), step, e.srv.AllCommitComments("acme", "prover"))
	}
}

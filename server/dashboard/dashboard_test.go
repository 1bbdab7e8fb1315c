package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// The synthetic history: 30 commits of a GitHub repository on main, 6
// baseline runs each on gpu-1, phases synthesis, ntt and msm_h; msm_h
// grows by 25% from commit stepAt on, total is the phases plus 50 ms.
// Two more commits (cmpBase, cmpHead) have 8 compare runs each, head's
// msm_h 20% slower; a stored comparison exists for (storedBase,
// storedHead). Another repository, a local path, has one series.
const (
	testRepo   = "perfbot/prover"
	localRepo  = "/srv/clones/prover"
	bench      = "Prove/circuit=sha256/constraints=65536/backend=gpu"
	commits    = 30
	runsPer    = 6 // baseline runs of each commit: enough for an interval
	stepAt     = 15
	otherTotal = 0.050
)

var (
	phaseBase = map[string]float64{"synthesis": 0.800, "ntt": 0.100, "msm_h": 0.400}
	t0        = time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC)
	now       = t0.Add(40 * 24 * time.Hour)
	cmpBase   = sha(100)
	cmpHead   = sha(101)
)

// sha is commit i's SHA; the first 7 digits differ between commits.
func sha(i int) string { return fmt.Sprintf("%08x%032x", uint32(i+1)*2654435761, i) }

// noise is a small deterministic wobble in [-0.5%, +0.5%].
func noise(i, j int) float64 { return 1 + 0.01*(math.Mod(float64(i*7+j*13), 11)/10-0.5) }

func phaseValue(phase string, commit, run int, step float64) float64 {
	v := phaseBase[phase] * noise(commit, run)
	if phase == "msm_h" && commit >= stepAt {
		v *= step
	}
	return v
}

func samples(commit, run int, step float64) []analysis.Sample {
	var ss []analysis.Sample
	total := otherTotal
	for _, p := range []string{"synthesis", "ntt", "msm_h"} {
		v := phaseValue(p, commit, run, step)
		total += v
		ss = append(ss, analysis.Sample{Key: analysis.Key{Benchmark: bench, Phase: p, Unit: "sec/op"}, Value: v})
	}
	ss = append(ss, analysis.Sample{Key: analysis.Key{Benchmark: bench, Phase: "total", Unit: "sec/op"}, Value: total},
		analysis.Sample{Key: analysis.Key{Benchmark: bench, Phase: "total", Unit: "page-faults/op"}, Value: 41})
	return ss
}

// testStore returns a new SQLite store with the synthetic history.
func testStore(t *testing.T) *store.DB {
	t.Helper()
	return testStoreAt(t, filepath.Join(t.TempDir(), "perfbot.db"))
}

// testStoreAt stores the synthetic history in the database at dsn.
func testStoreAt(t *testing.T, dsn string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	save := func(r *store.RunRecord) {
		t.Helper()
		if _, err := db.SaveRun(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	for i := range commits {
		for j := range runsPer {
			save(&store.RunRecord{
				Repo: testRepo, Commit: store.Commit{SHA: sha(i), Subject: fmt.Sprintf("commit %d", i)},
				Kind: store.KindBaseline, Machine: "gpu-1", ConfigHash: "cfg", Status: analysis.StatusOK,
				StartedAt: t0.Add(time.Duration(i)*24*time.Hour + time.Duration(j)*time.Minute),
				Samples:   samples(i, j, 1.25),
			})
		}
	}
	// One stray run on another machine: the trend charts gpu-1's.
	save(&store.RunRecord{Repo: testRepo, Commit: store.Commit{SHA: sha(3)}, Kind: store.KindBaseline, Machine: "gpu-2",
		ConfigHash: "cfg", Status: analysis.StatusOK, StartedAt: t0.Add(3*24*time.Hour + time.Hour), Samples: samples(3, 0, 1)})
	for j := range 8 {
		for side, c := range map[int]string{0: cmpBase, 1: cmpHead} {
			step := 1.0
			if side == 1 {
				step = 1.2
			}
			save(&store.RunRecord{Repo: testRepo, Commit: store.Commit{SHA: c}, Kind: store.KindCompare, Machine: "gpu-1",
				ConfigHash: "cfg", Status: analysis.StatusOK, StartedAt: t0.Add(35*24*time.Hour + time.Duration(2*j+side)*time.Minute),
				Samples: samples(stepAt, j, step)})
		}
	}
	save(&store.RunRecord{Repo: localRepo, Commit: store.Commit{SHA: sha(200)}, Kind: store.KindBaseline, Machine: "dev",
		Status: analysis.StatusOK, StartedAt: t0, Samples: samples(0, 0, 1)[:1]})
	var rep bytes.Buffer
	if err := render.RenderJSON(&rep, &analysis.Report{Verdict: analysis.VerdictImprovement, Base: sha(1), Head: sha(2),
		Phases: []analysis.Row{{Key: analysis.Key{Benchmark: bench, Phase: "ntt", Unit: "sec/op"}, Verdict: analysis.VerdictImprovement,
			Base: analysis.Summary{Median: 0.1, N: 10}, Head: analysis.Summary{Median: 0.08, N: 10}, ShiftPct: -20, BaseValue: 0.1, HeadValue: 0.08, Shift: -0.02, ShiftLo: -0.0225, ShiftHi: -0.01725,
			DeltaLoPct: -22.5, DeltaHiPct: -17.25, PValue: 0.001}},
		Warnings: []string{}}); err != nil {
		t.Fatal(err)
	}
	// Two comparisons of the pair (sha(1), sha(2)): an older inconclusive
	// one and the improvement; and an A/A comparison of sha(5) that
	// called a (false) improvement.
	var older bytes.Buffer
	if err := render.RenderJSON(&older, &analysis.Report{Verdict: analysis.VerdictInconclusive, Base: sha(1), Head: sha(2), Warnings: []string{}}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []store.Comparison{
		{Repo: testRepo, BaseSHA: sha(1), HeadSHA: sha(2), Verdict: "inconclusive", Report: older.String(), CreatedAt: t0.Add(24 * time.Hour)},
		{Repo: testRepo, BaseSHA: sha(1), HeadSHA: sha(2), Verdict: "improvement", Report: rep.String(), Markdown: "…", CreatedAt: t0.Add(2 * 24 * time.Hour), PR: 7},
		{Repo: testRepo, BaseSHA: sha(5), HeadSHA: sha(5), Verdict: "improvement",
			Report: strings.ReplaceAll(strings.ReplaceAll(rep.String(), sha(1), sha(5)), sha(2), sha(5)), CreatedAt: t0.Add(5 * 24 * time.Hour)},
	} {
		if _, err := db.SaveComparison(ctx, &c); err != nil {
			t.Fatal(err)
		}
	}
	return db
}

func newTestDashboard(t *testing.T, jobs func(context.Context, int) ([]queue.Job, error)) *Dashboard {
	return New(Config{Store: testStore(t), Jobs: jobs, Now: func() time.Time { return now },
		Logger: slog.New(slog.NewTextHandler(testLog{t}, nil))})
}

// testLog writes the dashboard's log lines (a 500's cause) to the test's
// log.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}

func do(t *testing.T, h http.Handler, path string) (int, string) {
	t.Helper()
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, path, nil))
	b, _ := io.ReadAll(rec.Result().Body)
	return rec.Code, string(b)
}

func getJSON[T any](t *testing.T, h http.Handler, path string) T {
	t.Helper()
	code, body := do(t, h, path)
	if code != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, code, body)
	}
	var v T
	if err := json.Unmarshal([]byte(body), &v); err != nil {
		t.Fatalf("GET %s: %v\n%s", path, err, body)
	}
	return v
}

func query(kv ...string) string {
	v := url.Values{}
	for i := 0; i < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v.Encode()
}

func TestDashboard(t *testing.T) {
	t.Parallel()
	d := newTestDashboard(t, nil)
	trendQ := query("repo", testRepo, "benchmark", bench, "phase", "msm_h", "unit", "sec/op", "since", "all")

	t.Run("IndexListsEverySeriesWithBaselineRuns", func(t *testing.T) {
		idx := getJSON[IndexData](t, d, "/api/series")
		if len(idx.Repos) != 2 || idx.Repos[0].Repo != localRepo || idx.Repos[1].Repo != testRepo {
			t.Fatalf("repos: %+v; want %s then %s", idx.Repos, localRepo, testRepo)
		}
		b := idx.Repos[1].Benchmarks
		if len(b) != 1 || b[0].Benchmark != bench {
			t.Fatalf("benchmarks of %s: %+v", testRepo, b)
		}
		var got []string
		for _, s := range b[0].Series {
			got = append(got, s.Phase+" "+s.Unit)
		}
		want := "total sec/op,total page-faults/op,msm_h sec/op,ntt sec/op,synthesis sec/op" // total first
		if strings.Join(got, ",") != want {
			t.Errorf("series: %s; want %s", strings.Join(got, ","), want)
		}
		if !strings.HasPrefix(b[0].PhasesURL, "/phases?") {
			t.Errorf("phases link %q", b[0].PhasesURL)
		}
		code, page := do(t, d, "/")
		if code != 200 || !strings.Contains(page, `href="/trend?benchmark=Prove%2Fcircuit%3Dsha256`) {
			t.Errorf("index page: %d, lacks a trend link:\n%s", code, page)
		}
		// The stored comparisons are listed, newest first, each linked to
		// its own page.
		if len(idx.Comparisons) != 3 || idx.Comparisons[1].Head != sha(2) || idx.Comparisons[1].Verdict != "improvement" ||
			idx.Comparisons[1].CompareURL != fmt.Sprintf("/compare?id=%d", idx.Comparisons[1].ID) || idx.Comparisons[0].Head != sha(5) {
			t.Errorf("recent comparisons %+v; want the A/A of %s, then the stored improvement of %s against %s", idx.Comparisons, sha(5)[:7], sha(2)[:7], sha(1)[:7])
		}
		if c := idx.Comparisons[1]; c.PR != 7 || c.PullURL != "https://github.com/perfbot/prover/pull/7" || idx.Comparisons[0].PR != 0 {
			t.Errorf("pull requests %d (%s) and %d; want #7 linked, then none", c.PR, c.PullURL, idx.Comparisons[0].PR)
		}
		if !strings.Contains(page, `<a class="pull-link" href="https://github.com/perfbot/prover/pull/7">#7</a>`) {
			t.Errorf("the index does not link the comparison's pull request")
		}
		if !strings.Contains(page, `id="recent-comparisons"`) || !strings.Contains(page, `class="verdict verdict-improvement">improvement<`) {
			t.Errorf("index page lacks the recent comparisons")
		}
		// The headline: total's latest median, its sparkline and its last
		// change point (msm_h's +25% from commit stepAt moves total by
		// 0.1 s of 1.35 s), on the machine with the most runs.
		h := b[0].Headline
		if h == nil {
			t.Fatal("no headline for the benchmark")
		}
		wantLatest := otherTotal
		for p := range phaseBase {
			wantLatest += phaseValue(p, commits-1, 1, 1.25)
		}
		if h.Phase != "total" || h.Machine != "gpu-1" || len(h.Values) != commits || math.Abs(h.Latest/wantLatest-1) > 0.01 || h.LatestCommit != sha(commits-1) {
			t.Errorf("headline %+v; want total on gpu-1, %d values, latest ≈ %.4f at %s", h, commits, wantLatest, sha(commits - 1)[:7])
		}
		if c := h.Change; c == nil || c.Commit != sha(stepAt) || c.Direction != "regression" || math.Abs(c.ChangePct-100*0.1/1.35) > 0.6 ||
			!slices.Equal(h.ChangeAt, []int{stepAt}) || !strings.HasPrefix(c.ChangeURL, "/change?") {
			t.Errorf("last change %+v at %v; want a regression of about +7.4%% at %s", c, h.ChangeAt, sha(stepAt)[:7])
		}
		if len(idx.Changes) != 1 || idx.Changes[0].Commit != sha(stepAt) {
			t.Errorf("recent changes %+v; want the one at %s", idx.Changes, sha(stepAt)[:7])
		}
		for _, want := range []string{`id="recent-changes"`, `<svg class="spark"`, `class="spark-change"`, `<td class="num latest">`} {
			if !strings.Contains(page, want) {
				t.Errorf("index page lacks %s", want)
			}
		}
	})

	t.Run("TrendHasChangePointAtTheStepAndLinksEveryCommit", func(t *testing.T) {
		td := getJSON[struct {
			Trend struct {
				Machine      string                 `json:"machine"`
				Commits      []analysis.TrendCommit `json:"commits"`
				ChangePoints []analysis.TrendChange `json:"change_points"`
			} `json:"trend"`
			Links []CommitLinks `json:"links"`
		}](t, d, "/api/trend?"+trendQ)
		tr := td.Trend
		if tr.Machine != "gpu-1" || len(tr.Commits) != commits {
			t.Fatalf("machine %s, %d commits; want gpu-1, %d", tr.Machine, len(tr.Commits), commits)
		}
		if len(tr.ChangePoints) != 1 || tr.ChangePoints[0].Commit != sha(stepAt) || tr.ChangePoints[0].Direction != "regression" ||
			math.Abs(tr.ChangePoints[0].ChangePct-25) > 1.5 {
			t.Fatalf("change points %+v; want one regression of about +25%% at %s", tr.ChangePoints, sha(stepAt))
		}
		if m := tr.Commits[0].Median; math.Abs(m-0.4) > 0.004 {
			t.Errorf("first median %v; want about 0.4", m)
		}
		if len(td.Links) != commits || td.Links[0].CompareURL != "" ||
			td.Links[5].CompareURL != "/compare?"+query("base", sha(4), "head", sha(5), "repo", testRepo) ||
			td.Links[5].CommitURL != "https://github.com/perfbot/prover/commit/"+sha(5) {
			t.Errorf("links: %+v", td.Links[:6])
		}
		cp := td.Links[stepAt]
		if cp.ChangeURL == "" || td.Links[stepAt-1].ChangeURL != "" || cp.PageURL != "/commit?"+query("repo", testRepo, "sha", sha(stepAt)) {
			t.Errorf("change point's links %+v; want its change page and its commit page", cp)
		}
		code, page := do(t, d, "/trend?"+trendQ)
		for _, want := range []string{`<div class="chart" id="trend-chart">`, `<script src="/static/vendor/uplot/uPlot.iife.min.js">`,
			`<script type="application/json" id="trend-json">`, `class="commit change-point" data-commit="` + sha(stepAt) + `"`,
			`href="https://github.com/perfbot/prover/commit/` + sha(5) + `"`, `class="compare-link"`,
			`<a class="change-link" href="` + html.EscapeString(cp.ChangeURL) + `">segments compared, bisect</a>`,
			`<option value="gpu-1" selected>gpu-1 (180 runs)</option>`, `<option value="gpu-2">gpu-2 (1 runs)</option>`,
			`<a href="/trend.svg?`, `<a href="/trend.png?`} {
			if code != 200 || !strings.Contains(page, want) {
				t.Errorf("trend page (%d) lacks %s", code, want)
			}
		}
		// The chart's data: one point per commit, in the page's scale (ms),
		// the change point's with its size and its change page.
		var chart struct {
			Unit   string `json:"unit"`
			Points []struct {
				Short, Subject, Change, URL string
				Median                      float64
			} `json:"points"`
		}
		js := regexp.MustCompile(`(?s)<script type="application/json" id="trend-json">(.*?)</script>`).FindStringSubmatch(page)
		if js == nil || json.Unmarshal([]byte(js[1]), &chart) != nil {
			t.Fatalf("no chart data on the page")
		}
		if chart.Unit != "ms/op" || len(chart.Points) != commits || chart.Points[3].Subject != "commit 3" || math.Abs(chart.Points[0].Median-400) > 4 ||
			!strings.HasPrefix(chart.Points[stepAt].Change, "+25.") || chart.Points[stepAt].URL != cp.ChangeURL || chart.Points[3].URL != td.Links[3].PageURL {
			t.Errorf("chart data: unit %s, %d points, %+v", chart.Unit, len(chart.Points), chart.Points[stepAt])
		}
	})

	t.Run("TrendImages", func(t *testing.T) {
		for _, tc := range []struct{ path, typ, prefix string }{
			{"/trend.svg?" + trendQ, "image/svg+xml", "<?xml"},
			{"/trend.png?" + trendQ, "image/png", "\x89PNG"},
		} {
			rec := httptest.NewRecorder()
			d.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, tc.path, nil))
			if body := rec.Body.String(); rec.Code != 200 || rec.Header().Get("Content-Type") != tc.typ || !strings.HasPrefix(body, tc.prefix) || len(body) < 2000 {
				t.Errorf("GET %s: %d, %d bytes of %s; want %s", tc.path, rec.Code, len(body), rec.Header().Get("Content-Type"), tc.typ)
			}
		}
		if code, _ := do(t, d, "/trend.svg?"+query("repo", testRepo, "benchmark", bench, "phase", "nope", "since", "all")); code != 404 {
			t.Errorf("image of an unknown series: %d; want 404", code)
		}
	})

	t.Run("ChangePageComparesTheSegmentsAndSaysHowToBisect", func(t *testing.T) {
		cq := query("repo", testRepo, "benchmark", bench, "phase", "total", "unit", "sec/op", "since", "all", "at", sha(stepAt)[:8])
		cd := getJSON[ChangeData](t, d, "/api/change?"+cq)
		if cd.Good != sha(stepAt-1) || cd.Bad != sha(stepAt) || len(cd.Before) != 10 || len(cd.After) != 10 || cd.Before[9] != sha(stepAt-1) || cd.After[0] != sha(stepAt) {
			t.Fatalf("good %s bad %s, %d before, %d after; want the 10 commits on each side of %s", cd.Good, cd.Bad, len(cd.Before), len(cd.After), sha(stepAt)[:7])
		}
		verdicts := map[string]analysis.Verdict{}
		for _, r := range cd.Report.Phases {
			if r.Unit == "sec/op" {
				verdicts[r.Phase] = r.Verdict
			}
		}
		if cd.Report.Verdict != analysis.VerdictRegression || verdicts["msm_h"] != analysis.VerdictRegression || verdicts["ntt"] == analysis.VerdictRegression {
			t.Errorf("segments compared: %s, %v; want msm_h's regression", cd.Report.Verdict, verdicts)
		}
		// total's change point bisects the phase that moved with it.
		want := BisectHint{Benchmark: bench, Phase: "msm_h", Unit: "sec/op",
			Command: "perfbot bisect --good " + sha(stepAt - 1)[:12] + " --bad " + sha(stepAt)[:12] + " --benchmark " + bench + " --phase msm_h",
			Comment: "/perfbot bisect " + sha(stepAt - 1)[:12] + " " + sha(stepAt)[:12] + " phase=msm_h"}
		if len(cd.Bisect) != 1 || cd.Bisect[0] != want {
			t.Errorf("bisect %+v; want [%+v]", cd.Bisect, want)
		}
		// One size of the change: total's row, with its interval.
		i := slices.IndexFunc(cd.Report.Phases, func(r analysis.Row) bool {
			return r.Key == analysis.Key{Benchmark: bench, Phase: "total", Unit: "sec/op"}
		})
		if row := cd.Report.Phases[i]; cd.Size.Source != "segments" || cd.Size.Pct == nil || *cd.Size.Pct != row.ShiftPct || cd.Size.LoPct == nil || *cd.Size.LoPct != row.DeltaLoPct ||
			*cd.Size.HiPct != row.DeltaHiPct || cd.Size.Verdict != "regression" {
			t.Errorf("size %+v; want total's row: %+.3f%% [%+.3f, %+.3f], regression", cd.Size, row.ShiftPct, row.DeltaLoPct, row.DeltaHiPct)
		}
		// Runs stored without a config are judged with analysis's
		// defaults, and the page says so.
		if c := cd.Config; c.Hash != "cfg" || c.Stored || c.Alpha != 0.05 || c.MinChangePct != 1 || c.LeftOut != 0 || cd.Report.Options.Alpha != 0.05 {
			t.Errorf("config %+v, report's α %v; want cfg without thresholds, analysis's defaults", c, cd.Report.Options.Alpha)
		}
		code, page := do(t, d, "/change?"+cq)
		for _, w := range []string{`<pre class="command bisect-command" data-benchmark="` + bench + `" data-phase="msm_h" data-unit="sec/op">` + want.Command + `</pre>`, `id="change-summary"`,
			`commit 15`, `<h2 id="attribution">`, `<td class="name"><code>msm_h</code></td>`,
			`<h1>+7.4% [+7.2, +7.5] regression at ` + short(sha(stepAt)) + `: `, `on, 1.350s → 1.450s: +7.4% [+7.2, +7.5], regression (the segments`,
			`<p id="change-config" class="muted">Judged with α = 0.05 and a noise floor of at least 1% (analysis&#39;s defaults: config cfg, the newest runs&#39;, was stored without its thresholds).</p>`} {
			if code != 200 || !strings.Contains(page, w) {
				t.Errorf("change page (%d) lacks %s", code, w)
			}
		}
		if code, body := do(t, d, "/api/change?"+query("repo", testRepo, "benchmark", bench, "phase", "total", "since", "all", "at", sha(3))); code != 404 ||
			!strings.Contains(body, "is not a change point") || !strings.Contains(body, short(sha(stepAt))) {
			t.Errorf("a commit that is no change point: %d %s; want 404 naming the change points", code, body)
		}
	})

	t.Run("CommitPageListsItsComparisonsAndTrends", func(t *testing.T) {
		cd := getJSON[CommitData](t, d, "/api/commit?"+query("repo", testRepo, "sha", sha(2)[:9]))
		if cd.SHA != sha(2) || cd.Subject != "commit 2" || len(cd.Comparisons) != 2 || cd.Comparisons[0].Verdict != "improvement" {
			t.Fatalf("commit page data %+v; want commit 2 with its two stored comparisons", cd)
		}
		if len(cd.Runs) != 1 || cd.Runs[0] != (RunCount{Kind: "baseline", Machine: "gpu-1", Status: "ok", Runs: runsPer}) {
			t.Errorf("runs %+v; want %d ok baseline runs on gpu-1", cd.Runs, runsPer)
		}
		if len(cd.Series) != 2 || !strings.HasSuffix(cd.Series[0].TrendURL, "#c-"+short(sha(2))) {
			t.Errorf("series %+v; want total's two units, linked at the commit", cd.Series)
		}
		_, page := do(t, d, "/commit?"+query("repo", testRepo, "sha", sha(2)))
		if !strings.Contains(page, `<a class="comparison-link" href="/compare?id=`) || !strings.Contains(page, `class="forge-link"`) {
			t.Errorf("commit page lacks its comparisons' links or the forge link")
		}
		if code, body := do(t, d, "/api/commit?"+query("repo", testRepo, "sha", "abcdef12")); code != 404 || !strings.Contains(body, "begins with abcdef12") {
			t.Errorf("unknown commit: %d %s", code, body)
		}
	})

	t.Run("LocalRepositoryHasNoGitHubLinks", func(t *testing.T) {
		td := getJSON[TrendData](t, d, "/api/trend?"+query("repo", localRepo, "benchmark", bench, "phase", "synthesis", "since", "all"))
		if len(td.Links) != 1 || td.Links[0].CommitURL != "" {
			t.Errorf("links %+v; want one without a commit URL", td.Links)
		}
	})

	t.Run("PhasesStackUpToTheTotal", func(t *testing.T) {
		pd := getJSON[PhasesData](t, d, "/api/phases?"+query("repo", testRepo, "benchmark", bench, "since", "all"))
		if strings.Join(pd.Phases, ",") != "synthesis,ntt,msm_h" || pd.Machine != "gpu-1" || len(pd.Commits) != commits {
			t.Fatalf("phases %v machine %s commits %d", pd.Phases, pd.Machine, len(pd.Commits))
		}
		for i, c := range pd.Commits {
			sum := c.Other
			for _, v := range c.Phases {
				sum += v
			}
			if len(c.Phases) != 3 || math.Abs(sum-c.Total) > 1e-9 || math.Abs(c.Other-otherTotal) > 0.01 {
				t.Errorf("commit %d: phases %v other %v total %v; want 3 phases, other ≈ %v, summing to total", i, c.Phases, c.Other, c.Total, otherTotal)
			}
		}
		if h0, h1 := pd.Commits[0].Phases["msm_h"], pd.Commits[commits-1].Phases["msm_h"]; math.Abs(h1/h0-1.25) > 0.02 {
			t.Errorf("msm_h %v → %v; want +25%%", h0, h1)
		}
		code, page := do(t, d, "/phases?"+query("repo", testRepo, "benchmark", bench, "since", "all"))
		// chart.Stacked fills a rectangle per commit and a legend swatch
		// per part in the part's color: the first phase's and "other"'s.
		first, other := `fill:#1F77B4"`, `fill:#C7C7C7"`
		if code != 200 || strings.Count(page, first) != commits+1 || strings.Count(page, other) != commits+1 ||
			!strings.Contains(page, `id="phases-svg"`) || !strings.Contains(page, `>msm_h</text>`) {
			t.Errorf("phases page (%d): %d and %d bars of the first phase and of other; want %d each, and msm_h in the legend",
				code, strings.Count(page, first), strings.Count(page, other), commits+1)
		}
	})

	t.Run("CompareFromStoredRunsFindsTheRegression", func(t *testing.T) {
		cd := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", cmpBase, "head", cmpHead))
		if cd.Source != "runs" || cd.Report == nil || cd.Report.Verdict != analysis.VerdictRegression {
			t.Fatalf("source %s verdict %v; want runs, regression", cd.Source, cd.Report)
		}
		verdicts := map[string]analysis.Verdict{}
		for _, r := range cd.Report.Phases {
			verdicts[r.Phase+" "+r.Unit] = r.Verdict
		}
		if verdicts["msm_h sec/op"] != analysis.VerdictRegression || verdicts["ntt sec/op"] != analysis.VerdictNoChange {
			t.Errorf("verdicts %v; want msm_h regression, ntt no-change", verdicts)
		}
		code, page := do(t, d, "/compare?"+query("repo", testRepo, "base", cmpBase, "head", cmpHead))
		if code != 200 || !strings.Contains(page, "nothing was measured") || strings.Contains(page, `id="aa"`) {
			t.Errorf("compare page (%d) lacks the source, or calls it A/A", code)
		}
		// The sentence the PR comment opens with; the verdict's series in
		// the main table by phase, the other units' apart.
		if !strings.HasPrefix(cd.Summary, "Regression. Head is worse than base in ") || !strings.Contains(cd.Summary, "msm_h") ||
			!strings.Contains(page, `<p id="summary" class="summary verdict-regression">Regression. Head is worse than base in <code>msm_h</code>`) {
			t.Errorf("summary %q, or the page lacks it", cd.Summary)
		}
		main, other, ok := strings.Cut(page, `id="other-units"`)
		if !ok || strings.Contains(main, "page-faults/op") || !strings.Contains(other, "page-faults/op") ||
			!strings.Contains(main, `<td class="name"><code>msm_h</code></td>`) {
			t.Errorf("page-faults/op should be in the other units' section only, msm_h in the main table by its phase name")
		}
		// The row's cells as the comment has them: the interval drawn, the
		// floor, the verdict; and the attribution of total's change.
		msmH := regexp.MustCompile(`(?s)<tr class="row" data-series="` + regexp.QuoteMeta(bench) + `/phase=msm_h" data-unit="sec/op">.*?</tr>`).FindString(main)
		for _, want := range []string{`<svg class="interval"`, `<td class="verdict verdict-regression">regression</td>`, `<b>+20.`} {
			if !strings.Contains(msmH, want) {
				t.Errorf("msm_h's row lacks %s:\n%s", want, msmH)
			}
		}
		if !strings.Contains(page, `<h2 id="attribution">`) || !strings.Contains(page, `class="share share-0" style="width: `) ||
			!strings.Contains(page, `title="msm_h: `) {
			t.Errorf("the page lacks the attribution's bar of shares")
		}
		// How to bisect the regressed phase.
		want := BisectHint{Benchmark: bench, Phase: "msm_h", Unit: "sec/op",
			Command: "perfbot bisect --good " + cmpBase[:12] + " --bad " + cmpHead[:12] + " --benchmark " + bench + " --phase msm_h",
			Comment: "/perfbot bisect " + cmpBase[:12] + " " + cmpHead[:12] + " phase=msm_h"}
		if len(cd.Bisect) != 1 || cd.Bisect[0] != want || !strings.Contains(page, `data-phase="msm_h" data-unit="sec/op">`+want.Command+`</pre>`) {
			t.Errorf("bisect hints %+v; want [%+v] on the page", cd.Bisect, want)
		}
	})

	t.Run("CompareTakesShortSHAs", func(t *testing.T) {
		full := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", cmpBase, "head", cmpHead))
		short := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", cmpBase[:7], "head", strings.ToUpper(cmpHead[:10])))
		if short.Base != cmpBase || short.Head != cmpHead || short.Report == nil || short.Report.Verdict != full.Report.Verdict || len(short.Report.Phases) != len(full.Report.Phases) {
			t.Errorf("short SHAs %s, %s: base %s head %s, %d rows; want the full comparison of %s and %s (%d rows)",
				cmpBase[:7], cmpHead[:10], short.Base, short.Head, len(short.Report.Phases), cmpBase, cmpHead, len(full.Report.Phases))
		}
	})

	t.Run("CompareShowsTheStoredComparison", func(t *testing.T) {
		cd := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", sha(1), "head", sha(2)))
		if cd.Source != "stored" || cd.ComparisonID == 0 || cd.Report.Verdict != analysis.VerdictImprovement || len(cd.Report.Phases) != 1 {
			t.Fatalf("got source %s id %d report %+v; want the stored improvement", cd.Source, cd.ComparisonID, cd.Report)
		}
		_, page := do(t, d, "/compare?"+query("repo", testRepo, "base", sha(1), "head", sha(2)))
		if !strings.Contains(page, fmt.Sprintf("Stored comparison #%d", cd.ComparisonID)) || !strings.Contains(page, "-20.0% [-22.5, -17.2]") {
			t.Errorf("compare page lacks the stored comparison's row:\n%s", page)
		}
		// Both comparisons of the pair are listed and reachable: the older
		// one by its id.
		if len(cd.Comparisons) != 2 || cd.Comparisons[0].ID != cd.ComparisonID || cd.Comparisons[1].Verdict != "inconclusive" ||
			!strings.Contains(page, `id="pair-comparisons"`) {
			t.Fatalf("pair comparisons %+v; want the improvement then the older inconclusive one, listed on the page", cd.Comparisons)
		}
		old := getJSON[CompareData](t, d, "/api"+cd.Comparisons[1].CompareURL)
		if old.ComparisonID != cd.Comparisons[1].ID || old.Report.Verdict != analysis.VerdictInconclusive || old.Base != sha(1) || old.Head != sha(2) {
			t.Errorf("%s: comparison %d, verdict %s; want the older inconclusive one", cd.Comparisons[1].CompareURL, old.ComparisonID, old.Report.Verdict)
		}
	})

	t.Run("AnAAComparisonIsSaidToBeOne", func(t *testing.T) {
		cd := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", sha(5), "head", sha(5)[:8]))
		if !cd.AA || cd.Report.Verdict != analysis.VerdictImprovement {
			t.Fatalf("A/A %v verdict %s; want an A/A that called an improvement", cd.AA, cd.Report.Verdict)
		}
		_, page := do(t, d, "/compare?"+query("repo", testRepo, "base", sha(5), "head", sha(5)))
		if !strings.Contains(page, `<p id="aa" class="aa">A/A comparison`) || !strings.Contains(page, "a false alarm") ||
			!strings.Contains(page, `class="summary verdict-aa"`) || strings.Contains(page, `class="summary verdict-improvement"`) {
			t.Errorf("the A/A comparison's page does not say it is one, or headlines it as an improvement")
		}
	})

	t.Run("JobsWithoutAQueueSaySo", func(t *testing.T) {
		jd := getJSON[JobsData](t, d, "/api/jobs")
		if jd.Available || !strings.Contains(jd.Note, "PostgreSQL") {
			t.Errorf("jobs %+v; want unavailable with a note naming PostgreSQL", jd)
		}
	})
}

func TestJobsAreGroupedByState(t *testing.T) {
	t.Parallel()
	created := now.Add(-3 * time.Hour)
	started, finished := created.Add(time.Minute), created.Add(13*time.Minute)
	jobs := []queue.Job{
		{ID: 5, Kind: queue.KindCompare, Queue: "gpu", State: "available", CreatedAt: created,
			Args: `{"repo":"o/r","pr":12,"head_sha":"` + sha(2) + `","base_sha":"` + sha(1) + `"}`},
		{ID: 4, Kind: queue.KindCompare, Queue: "gpu", State: "running", CreatedAt: created, AttemptedAt: &started, Attempt: 1, MaxAttempts: 3},
		{ID: 3, Kind: queue.KindNotify, Queue: "control", State: "completed", CreatedAt: created, AttemptedAt: &started, FinalizedAt: &finished},
		{ID: 2, Kind: queue.KindBaseline, Queue: "gpu", State: "retryable", CreatedAt: created, Args: `{"repo":"o/r","sha":"` + sha(3) + `"}`,
			LastError: "build: exit status 2"},
		{ID: 1, Kind: queue.KindBisect, Queue: "gpu", State: "discarded", CreatedAt: created, FinalizedAt: &created,
			Args: `{"repo":"o/r","pr":7,"good":"` + sha(1) + `","bad":"` + sha(4) + `","phase":"msm_h"}`},
	}
	oldest, lastStart, recent := now.Add(-3*time.Hour), now.Add(-5*time.Hour), now.Add(-30*time.Minute)
	d := New(Config{Store: nil, Now: func() time.Time { return now }, JobTimeout: 2 * time.Hour,
		Jobs: func(_ context.Context, limit int) ([]queue.Job, error) {
			if limit != jobsLimit {
				t.Errorf("limit %d; want %d", limit, jobsLimit)
			}
			return jobs, nil
		},
		Queues: func(context.Context) ([]queue.QueueStatus, error) {
			return []queue.QueueStatus{
				{Queue: "control", Available: 1, OldestAvailable: &oldest, LastAttempt: &lastStart}, // none started for 5 h: warned
				{Queue: "gpu", Available: 2, Running: 1, OldestAvailable: &oldest, LastAttempt: &recent},
				{Queue: "cpu", Available: 2, OldestAvailable: &oldest}, // never started one: warned
			}, nil
		}})
	jd := getJSON[JobsData](t, d, "/api/jobs")
	ids := func(js []JobView) (out []int64) {
		for _, j := range js {
			out = append(out, j.ID)
		}
		return out
	}
	if fmt.Sprint(ids(jd.Queued), ids(jd.Running), ids(jd.Finished)) != "[5 2] [4] [3 1]" || !jd.Available {
		t.Errorf("queued %v running %v finished %v; want [5 2] [4] [3 1]", ids(jd.Queued), ids(jd.Running), ids(jd.Finished))
	}
	// Each job says what it is about and links to it, with its age, how
	// long it ran and its last error.
	cmpJob, baseJob, bisJob := jd.Queued[0], jd.Queued[1], jd.Finished[1]
	if cmpJob.Subject != "o/r#12 head "+short(sha(2))+" against "+short(sha(1)) || cmpJob.PullURL != "https://github.com/o/r/pull/12" ||
		cmpJob.CompareURL != compareURL("o/r", sha(1), sha(2)) || cmpJob.CommitURL != commitPageURL("o/r", sha(2)) || cmpJob.Age != "3h 0m" {
		t.Errorf("compare job %+v", cmpJob)
	}
	if baseJob.Subject != "o/r baseline of "+short(sha(3)) || baseJob.LastError != "build: exit status 2" || baseJob.PullURL != "" {
		t.Errorf("baseline job %+v", baseJob)
	}
	if bisJob.Subject != "o/r#7 bisect "+short(sha(1))+".."+short(sha(4))+" phase msm_h" {
		t.Errorf("bisect job %+v", bisJob)
	}
	if r, f := jd.Running[0], jd.Finished[0]; r.Duration != "2h 59m" || f.Duration != "12m" {
		t.Errorf("durations: running %q, finished %q; want 2h 59m so far and 12m", r.Duration, f.Duration)
	}
	if len(jd.Warnings) != 2 || !strings.HasPrefix(jd.Warnings[0], "queue control: 1 job waits, the oldest for 3h 0m, and no worker has started one of its jobs for 5h 0m") ||
		!strings.Contains(jd.Warnings[0], "perfbot worker --queue control") ||
		!strings.HasPrefix(jd.Warnings[1], "queue cpu: 2 jobs wait, the oldest for 3h 0m, and no worker has ever started one of its jobs") {
		t.Errorf("warnings %q; want one about queue control and one about cpu, none about gpu (a job of it started 30 minutes ago)", jd.Warnings)
	}
	code, page := do(t, d, "/jobs")
	for _, want := range []string{`<tr class="job" data-id="4" data-state="running">`, `<a class="pull-link" href="https://github.com/o/r/pull/12">`,
		`id="queue-warnings"`, `build: exit status 2`} {
		if code != 200 || !strings.Contains(page, want) {
			t.Errorf("jobs page (%d) lacks %s", code, want)
		}
	}
	failing := New(Config{Jobs: func(context.Context, int) ([]queue.Job, error) { return nil, fmt.Errorf("connection refused") }})
	if code, body := do(t, failing, "/api/jobs"); code != 500 || strings.Contains(body, "refused") {
		t.Errorf("database error: %d %s; want 500 without the internal error", code, body)
	}
}

func TestBadParametersSayWhatToDo(t *testing.T) {
	t.Parallel()
	d := newTestDashboard(t, nil)
	for _, tc := range []struct {
		path string
		code int
		want string
	}{
		{"/api/trend?" + query("benchmark", bench, "phase", "total"), 400, "repo is required"},
		{"/api/trend?" + query("repo", testRepo, "phase", "total"), 400, "benchmark is required"},
		{"/api/trend?" + query("repo", testRepo, "benchmark", bench), 400, "phase is required: e.g. phase=total"},
		{"/api/trend?" + query("repo", testRepo, "benchmark", bench, "phase", "total", "since", "yesterday"), 400, "want a duration back from now such as 36h"},
		{"/api/trend?" + query("repo", testRepo, "benchmark", bench, "phase", "total", "machine", "gpu-9"), 400, "leave machine out"},
		{"/api/trend?" + query("repo", testRepo, "benchmark", bench, "phase", "nope"), 404,
			"has no series phase=nope unit=sec/op; its phases and units: msm_h sec/op, ntt sec/op, synthesis sec/op, total page-faults/op, total sec/op"},
		{"/api/trend?" + query("repo", "nobody/here", "benchmark", bench, "phase", "total"), 404,
			"repository nobody/here has no baseline runs; stored: " + localRepo + ", " + testRepo},
		{"/api/trend?" + query("repo", testRepo, "benchmark", "Nope", "phase", "total"), 404, "has no benchmark Nope with baseline runs; its benchmarks: " + bench},
		{"/api/change?" + query("repo", testRepo, "benchmark", bench, "phase", "total", "at", "zz"), 400, "at=zz: want the change point's commit SHA"},
		{"/api/commit?" + query("repo", testRepo, "sha", "xyz"), 400, "sha=xyz: want a commit SHA"},
		{"/api/commit?" + query("sha", sha(1)), 400, "repo is required"},
		{"/api/phases?" + query("repo", testRepo, "benchmark", bench, "since", "soon"), 400, "since=soon"},
		{"/api/trend?" + query("repo", testRepo, "benchmark", bench, "phase", "total", "since", "1d"), 404, "widen the window with since=all"},
		{"/api/phases?" + query("repo", testRepo), 400, "benchmark is required"},
		{"/api/compare?" + query("repo", testRepo, "base", cmpBase), 400, "base and head are required"},
		{"/api/compare?" + query("repo", testRepo, "base", "HEAD~1", "head", cmpHead), 400, "want hexadecimal commit SHAs"},
		{"/api/compare?" + query("repo", testRepo, "base", "ffffffff", "head", cmpHead), 404, "no stored commit of " + testRepo + " begins with ffffffff: pick commits with runs"},
		{"/api/compare?" + query("repo", testRepo, "base", sha(999), "head", cmpHead), 404, "no stored runs of commit " + sha(999)},
		{"/api/compare?id=999", 404, "no stored comparison #999: the index (/) lists the newest"},
		{"/api/compare?id=x1", 400, "id=x1: want a stored comparison's number"},
	} {
		code, body := do(t, d, tc.path)
		var e struct{ Error string }
		if err := json.Unmarshal([]byte(body), &e); err != nil || code != tc.code || !strings.Contains(e.Error, tc.want) {
			t.Errorf("GET %s: %d %s; want %d with %q", tc.path, code, body, tc.code, tc.want)
		}
		// The page says the same, escaped, with the same status.
		page := strings.Replace(tc.path, "/api", "", 1)
		if pcode, pbody := do(t, d, page); pcode != tc.code || !strings.Contains(pbody, `id="error-message"`) {
			t.Errorf("GET %s: %d; want %d and the message", page, pcode, tc.code)
		}
	}
	// What the user typed is escaped on the page.
	if code, page := do(t, d, "/trend?"+query("repo", testRepo, "benchmark", bench, "phase", "total", "since", "<script>x</script>")); code != 400 ||
		strings.Contains(page, "<script>") || !strings.Contains(page, "since=&lt;script&gt;") {
		t.Errorf("bad since with markup: %d; want 400 with the value escaped", code)
	}
	if code, _ := do(t, d, "/no-such-page"); code != 404 {
		t.Errorf("unknown page: %d; want 404", code)
	}
	if code, body := do(t, d, "/static/style.css"); code != 200 || !strings.Contains(body, "body") {
		t.Errorf("stylesheet: %d", code)
	}
}

// TestNoBadRequestGetsA500 sends every page and its JSON malformed and
// unknown parameters (missing, empty, garbage, markup, huge, unknown
// SHAs and ids): each answer is a 400 or a 404 with a message, never a
// 500 or a stack trace.
func TestNoBadRequestGetsA500(t *testing.T) {
	t.Parallel()
	d := newTestDashboard(t, nil)
	values := []string{"", "x", "<script>alert(1)</script>", strings.Repeat("9", 5000), "ффф", "../../etc/passwd", "-1", "0", "%zz", sha(999), sha(1)[:4], "all"}
	params := map[string][]string{
		"/trend":     {"repo", "benchmark", "phase", "unit", "since", "machine"},
		"/trend.svg": {"repo", "benchmark", "phase", "since", "machine"},
		"/phases":    {"repo", "benchmark", "unit", "since", "machine"},
		"/compare":   {"repo", "base", "head", "id"},
		"/change":    {"repo", "benchmark", "phase", "at", "since"},
		"/commit":    {"repo", "sha"},
	}
	good := map[string]string{"repo": testRepo, "benchmark": bench, "phase": "total", "unit": "sec/op", "since": "all",
		"base": cmpBase, "head": cmpHead, "sha": sha(2), "at": sha(stepAt)}
	n := 0
	for path, names := range params {
		for _, bad := range names {
			for _, v := range values {
				q := url.Values{}
				for _, name := range names {
					if g, ok := good[name]; ok {
						q.Set(name, g)
					}
				}
				q.Set(bad, v)
				for _, p := range []string{path, "/api" + path} {
					if p == "/api/trend.svg" {
						continue
					}
					code, body := do(t, d, p+"?"+q.Encode())
					n++
					if code >= 500 || strings.Contains(body, "goroutine ") || strings.Contains(body, "panic") {
						t.Errorf("GET %s?%s: %d\n%.300s", p, q.Encode(), code, body)
					}
					if code >= 400 && !strings.Contains(body, "error") {
						t.Errorf("GET %s?%s: %d without a message", p, q.Encode(), code)
					}
				}
			}
		}
	}
	t.Logf("%d requests", n)
}

// TestFrontPageFollowsNewRuns checks that the front page's cached view of
// the runs (every series, the headlines) is dropped as soon as a run is
// stored: a new commit's baseline runs make its latest value, and a new
// series shows at once.
func TestFrontPageFollowsNewRuns(t *testing.T) {
	t.Parallel()
	db := testStore(t)
	d := New(Config{Store: db, Now: func() time.Time { return now }})
	before := getJSON[IndexData](t, d, "/api/series")
	if h := before.Repos[1].Benchmarks[0].Headline; h == nil || h.LatestCommit != sha(commits-1) {
		t.Fatalf("headline %+v; want the latest commit %s", h, short(sha(commits-1)))
	}
	if again := getJSON[IndexData](t, d, "/api/series"); len(again.Repos[1].Benchmarks[0].Series) != 5 {
		t.Fatalf("second read: %d series; want 5", len(again.Repos[1].Benchmarks[0].Series))
	}
	next := sha(commits)
	for j := range runsPer {
		ss := append(samples(commits, j, 1.25), analysis.Sample{Key: analysis.Key{Benchmark: bench, Phase: "assemble", Unit: "sec/op"}, Value: 0.01})
		if _, err := db.SaveRun(context.Background(), &store.RunRecord{Repo: testRepo, Commit: store.Commit{SHA: next}, Kind: store.KindBaseline,
			Machine: "gpu-1", ConfigHash: "cfg", Status: analysis.StatusOK, StartedAt: t0.Add(commits*24*time.Hour + time.Duration(j)*time.Minute),
			Samples: ss}); err != nil {
			t.Fatal(err)
		}
	}
	after := getJSON[IndexData](t, d, "/api/series")
	b := after.Repos[1].Benchmarks[0]
	if b.Headline == nil || b.Headline.LatestCommit != next || len(b.Headline.Values) != commits+1 || len(b.Series) != 6 {
		t.Errorf("after a new commit's runs: headline %+v, %d series; want %s latest, %d values, 6 series (assemble added)", b.Headline, len(b.Series), short(next), commits+1)
	}
}

// saveReport stores rep as a comparison of head against base in the
// test repository and returns its id.
func saveReport(t *testing.T, db *store.DB, rep *analysis.Report, created time.Time) int64 {
	t.Helper()
	var b bytes.Buffer
	if err := render.RenderJSON(&b, rep); err != nil {
		t.Fatal(err)
	}
	id, err := db.SaveComparison(context.Background(), &store.Comparison{Repo: testRepo, BaseSHA: rep.Base, HeadSHA: rep.Head,
		Verdict: string(rep.Verdict), Report: b.String(), CreatedAt: created})
	if err != nil {
		t.Fatal(err)
	}
	return id
}

// variantReport is a comparison of commit i with itself, base and head
// run with the given arguments, that found msm_h +22.5% slower.
func variantReport(i int, baseArgs, headArgs []string) *analysis.Report {
	return &analysis.Report{Verdict: analysis.VerdictRegression, Base: sha(i), Head: sha(i), BaseArgs: baseArgs, HeadArgs: headArgs,
		Options: analysis.Options{Alpha: 0.01},
		Phases: []analysis.Row{{Key: analysis.Key{Benchmark: bench, Phase: "msm_h", Unit: "sec/op"}, Primary: true, Verdict: analysis.VerdictRegression,
			Base: analysis.Summary{Median: 0.4, N: 20}, Head: analysis.Summary{Median: 0.49, N: 20}, ShiftPct: 22.5, BaseValue: 0.4, HeadValue: 0.49,
			Shift: 0.09, ShiftLo: 0.08, ShiftHi: 0.1, DeltaLoPct: 20, DeltaHiPct: 25, PValue: 0.001}},
		Warnings: []string{}}
}

// TestVariantComparisonIsNoAA stores a comparison of one commit with
// itself under different arguments (perfbot compare --head-args) that
// found a regression, and one under the same arguments on both sides:
// the first is an A/B of the arguments on every page that shows it (no
// A/A banner, no "noise", its arguments named, its verdict's colour, no
// bisect hint for one commit), the second an A/A.
func TestVariantComparisonIsNoAA(t *testing.T) {
	t.Parallel()
	db := testStore(t)
	d := New(Config{Store: db, Now: func() time.Time { return now }})
	ab := saveReport(t, db, variantReport(6, []string{"--msm=pippenger"}, []string{"--msm=glv", "--window=16"}), t0.Add(6*24*time.Hour))
	aa := saveReport(t, db, variantReport(7, []string{"--msm=glv"}, []string{"--msm=glv"}), t0.Add(7*24*time.Hour))

	cd := getJSON[CompareData](t, d, fmt.Sprintf("/api/compare?id=%d", ab))
	if cd.AA || cd.Report.Verdict != analysis.VerdictRegression || len(cd.Bisect) != 0 {
		t.Errorf("A/B of arguments: aa %v, verdict %s, bisect %+v; want no A/A, a regression, nothing to bisect", cd.AA, cd.Report.Verdict, cd.Bisect)
	}
	_, page := do(t, d, fmt.Sprintf("/compare?id=%d", ab))
	for _, want := range []string{
		`<p id="variants" class="variants">A/B of arguments at one commit: base args <code class="base-args">--msm=pippenger</code>, head args <code class="head-args">--msm=glv --window=16</code>.`,
		`<p id="summary" class="summary verdict-regression">Regression.`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("the A/B of arguments' page lacks %s", want)
		}
	}
	for _, bad := range []string{`id="aa"`, `verdict-aa`, `a false alarm`, `id="bisect"`} {
		if strings.Contains(page, bad) {
			t.Errorf("the A/B of arguments' page has %s", bad)
		}
	}

	cd = getJSON[CompareData](t, d, fmt.Sprintf("/api/compare?id=%d", aa))
	_, page = do(t, d, fmt.Sprintf("/compare?id=%d", aa))
	if !cd.AA || !strings.Contains(page, `<p id="aa" class="aa">A/A comparison: base and head are the same commit with the same arguments (<code>--msm=glv</code>), so every change below is noise. This one called a regression: a false alarm, which α = 0.01 allows in about 1 comparison in 100.</p>`) ||
		!strings.Contains(page, `class="summary verdict-aa"`) || strings.Contains(page, `id="variants"`) {
		t.Errorf("the same arguments on both sides: aa %v, or the page does not say it is an A/A", cd.AA)
	}

	// The index and the commit page say the same of each.
	idx := getJSON[IndexData](t, d, "/api/series")
	kinds := map[int64]IndexComparison{}
	for _, c := range idx.Comparisons {
		kinds[c.ID] = c
	}
	if c := kinds[ab]; c.AA || !slices.Equal(c.BaseArgs, []string{"--msm=pippenger"}) || !slices.Equal(c.HeadArgs, []string{"--msm=glv", "--window=16"}) {
		t.Errorf("index: the A/B of arguments %+v; want no A/A, both sides' arguments", c)
	}
	for _, c := range idx.Comparisons {
		if want := c.ID == aa || c.Head == sha(5); c.AA != want {
			t.Errorf("index: comparison #%d of %s against %s: A/A %v; want %v", c.ID, short(c.Head), short(c.Base), c.AA, want)
		}
	}
	abLabel := `<span class="muted args-label">(A/B of arguments: base <code>--msm=pippenger</code>, head <code>--msm=glv --window=16</code>)</span>`
	_, page = do(t, d, "/")
	row := regexp.MustCompile(`(?s)<td><a class="compare-link" href="/compare\?id=` + fmt.Sprint(ab) + `">.*?</tr>`).FindString(page)
	if !strings.Contains(row, abLabel) || !strings.Contains(row, `<td class="verdict verdict-regression">regression</td>`) || strings.Contains(row, "(A/A)") {
		t.Errorf("index row of the A/B of arguments:\n%s", row)
	}
	if !strings.Contains(page, `(A/A)`) || !strings.Contains(page, `regression (noise)`) {
		t.Errorf("the index does not call the A/A under the same arguments an A/A")
	}
	_, page = do(t, d, "/commit?"+query("repo", testRepo, "sha", sha(6)))
	if !strings.Contains(page, abLabel) || !strings.Contains(page, `<td class="verdict verdict-regression">regression</td>`) || strings.Contains(page, "(noise)") {
		t.Errorf("the commit page does not name the A/B's arguments, or calls it noise")
	}
}

// TestLinksNameTheComparisonTheyMean follows the links that mean one
// stored comparison: the compare page's JSON link and the commit page's
// link to the comparison with its parent carry its id, and still open
// it once a newer comparison of the same pair is stored.
func TestLinksNameTheComparisonTheyMean(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testStore(t)
	d := New(Config{Store: db, Now: func() time.Time { return now }})
	// sha(2)'s parent is sha(1): the pair of the two stored comparisons.
	if _, err := db.SaveRun(ctx, &store.RunRecord{Repo: testRepo, Commit: store.Commit{SHA: sha(2), Parents: []string{sha(1)}}, Kind: store.KindCompare,
		Machine: "gpu-1", ConfigHash: "cfg", Status: analysis.StatusOK, StartedAt: t0.Add(36 * 24 * time.Hour), Samples: samples(2, 0, 1)}); err != nil {
		t.Fatal(err)
	}
	pair := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", sha(1), "head", sha(2)))
	newest, older := pair.Comparisons[0].ID, pair.Comparisons[1].ID

	// The JSON link of the older comparison's page returns it, not the
	// pair's newest; the pair's page links the one it shows.
	_, page := do(t, d, fmt.Sprintf("/compare?id=%d", older))
	link := fmt.Sprintf(`<a href="/api/compare?id=%d">JSON</a>`, older)
	if !strings.Contains(page, link) {
		t.Fatalf("the page of comparison #%d lacks %s", older, link)
	}
	if got := getJSON[CompareData](t, d, fmt.Sprintf("/api/compare?id=%d", older)); got.ComparisonID != older || got.Report.Verdict != analysis.VerdictInconclusive {
		t.Errorf("its JSON link returned comparison #%d (%s); want #%d, inconclusive", got.ComparisonID, got.Report.Verdict, older)
	}
	if _, page := do(t, d, "/compare?"+query("repo", testRepo, "base", sha(1), "head", sha(2))); !strings.Contains(page, fmt.Sprintf(`<a href="/api/compare?id=%d">JSON</a>`, newest)) {
		t.Errorf("the pair's page does not link the JSON of the comparison it shows, #%d", newest)
	}
	// A comparison made now from the runs has no id: its link names both
	// commits in full.
	if _, page := do(t, d, "/compare?"+query("repo", testRepo, "base", cmpBase[:8], "head", cmpHead[:8])); !strings.Contains(page,
		`<a href="/api/compare?`+html.EscapeString(query("repo", testRepo, "base", cmpBase, "head", cmpHead))+`">JSON</a>`) {
		t.Errorf("the comparison of runs does not link its JSON by the full SHAs")
	}

	// The commit page's link to the comparison with its parent names it.
	cd := getJSON[CommitData](t, d, "/api/commit?"+query("repo", testRepo, "sha", sha(2)))
	want := fmt.Sprintf("/compare?id=%d", newest)
	if !slices.Equal(cd.Parents, []string{sha(1)}) || cd.ParentComparisonID != newest || cd.ParentCompareURL != want {
		t.Fatalf("parents %v, parent comparison #%d at %s; want %s's #%d at %s", cd.Parents, cd.ParentComparisonID, cd.ParentCompareURL, short(sha(1)), newest, want)
	}
	_, page = do(t, d, "/commit?"+query("repo", testRepo, "sha", sha(2)))
	if !strings.Contains(page, fmt.Sprintf(`<a class="compare-link" href="%s">compare with its parent (stored comparison #%d)</a>`, want, newest)) {
		t.Errorf("the commit page's parent link does not name comparison #%d", newest)
	}
	later := saveReport(t, db, &analysis.Report{Verdict: analysis.VerdictNoChange, Base: sha(1), Head: sha(2), Warnings: []string{}}, t0.Add(30*24*time.Hour))
	if got := getJSON[CompareData](t, d, "/api"+want); got.ComparisonID != newest || got.ComparisonID == later {
		t.Errorf("after #%d was stored, the parent link opened #%d; want #%d", later, got.ComparisonID, newest)
	}
	// Without a stored comparison of the two, the link compares their runs.
	if cd := getJSON[CommitData](t, d, "/api/commit?"+query("repo", testRepo, "sha", cmpHead)); cd.ParentCompareURL != "" {
		t.Errorf("a commit without known parents links %q", cd.ParentCompareURL)
	}
}

// TestBisectHintsRunAsPrinted checks the commands a stored comparison's
// page prints to bisect its regressions: one per benchmark's regressed
// series, each naming its benchmark (quoted for a shell where it must
// be), its phase, its unit when not sec/op and the config file the
// comparison was measured with; the pull-request comment only where it
// bisects the same series (sec/op).
func TestBisectHintsRunAsPrinted(t *testing.T) {
	t.Parallel()
	db := testStore(t)
	d := New(Config{Store: db, Now: func() time.Time { return now }})
	const verify = "Verify/curve=bn254(g1)"
	row := func(b, phase, unit string, v analysis.Verdict) analysis.Row {
		return analysis.Row{Key: analysis.Key{Benchmark: b, Phase: phase, Unit: unit}, Primary: true, Verdict: v,
			Base: analysis.Summary{Median: 1, N: 20}, Head: analysis.Summary{Median: 1.1, N: 20}, ShiftPct: 10, BaseValue: 1, HeadValue: 1.1,
			Shift: 0.1, ShiftLo: 0.08, ShiftHi: 0.12, DeltaLoPct: 8, DeltaHiPct: 12, PValue: 0.001}
	}
	rep := &analysis.Report{Verdict: analysis.VerdictRegression, Base: sha(8), Head: sha(9), ConfigPath: "/etc/perfbot/prover ci.yml",
		Options: analysis.Options{Alpha: 0.01, PrimaryUnits: []string{"sec/op", "allocs/op"}},
		Phases: []analysis.Row{
			row(bench, "total", "sec/op", analysis.VerdictRegression), row(bench, "msm_h", "sec/op", analysis.VerdictRegression),
			row(bench, "ntt", "sec/op", analysis.VerdictNoChange),
			row(verify, "total", "sec/op", analysis.VerdictRegression), row(verify, "total", "allocs/op", analysis.VerdictRegression),
		}, Warnings: []string{}}
	id := saveReport(t, db, rep, t0.Add(8*24*time.Hour))
	cd := getJSON[CompareData](t, d, fmt.Sprintf("/api/compare?id=%d", id))
	ends := "perfbot bisect --good " + sha(8)[:12] + " --bad " + sha(9)[:12]
	want := []BisectHint{
		{Benchmark: bench, Phase: "msm_h", Unit: "sec/op", Command: ends + " --benchmark " + bench + " --phase msm_h --config '/etc/perfbot/prover ci.yml'",
			Comment: "/perfbot bisect " + sha(8)[:12] + " " + sha(9)[:12] + " phase=msm_h"},
		{Benchmark: verify, Phase: "total", Unit: "sec/op", Command: ends + " --benchmark 'Verify/curve=bn254(g1)' --phase total --config '/etc/perfbot/prover ci.yml'",
			Comment: "/perfbot bisect " + sha(8)[:12] + " " + sha(9)[:12] + " phase=total"},
		{Benchmark: verify, Phase: "total", Unit: "allocs/op", Command: ends + " --benchmark 'Verify/curve=bn254(g1)' --phase total --unit allocs/op --config '/etc/perfbot/prover ci.yml'"},
	}
	if !slices.Equal(cd.Bisect, want) {
		t.Errorf("bisect hints:\n%+v\nwant\n%+v", cd.Bisect, want)
	}
	_, page := do(t, d, fmt.Sprintf("/compare?id=%d", id))
	for _, h := range want {
		if !strings.Contains(page, `data-unit="`+h.Unit+`">`+html.EscapeString(h.Command)+`</pre>`) {
			t.Errorf("the page lacks %s", h.Command)
		}
	}
	if n := strings.Count(page, `class="command bisect-comment"`); n != 2 {
		t.Errorf("%d bisect comments on the page; want 2 (none for allocs/op, which the comment cannot bisect)", n)
	}
	// A repository that is a path is passed with --repo, quoted.
	if h := bisectHint("/srv/my clones/prover", sha(8), sha(9), analysis.Key{Benchmark: bench, Phase: "ntt", Unit: "sec/op"}, ""); h.Command !=
		"perfbot bisect --repo '/srv/my clones/prover' --good "+sha(8)[:12]+" --bad "+sha(9)[:12]+" --benchmark "+bench+" --phase ntt" {
		t.Errorf("bisect of a local repository: %s", h.Command)
	}
}

// TestIntervalBarsShareOneScale checks the compare page's interval
// bars: every row of a table is drawn on one scale that holds each
// change, its interval and its floor band, its ends rounded out, so 0 is
// at the same pixel on every row and on the axis in the table's heading,
// which labels the ends and 0 in percent; another table has its own.
func TestIntervalBarsShareOneScale(t *testing.T) {
	t.Parallel()
	db := testStore(t)
	d := New(Config{Store: db, Now: func() time.Time { return now }})
	row := func(phase, unit string, v analysis.Verdict, pct, lo, hi, floor float64) analysis.Row {
		return analysis.Row{Key: analysis.Key{Benchmark: bench, Phase: phase, Unit: unit}, Primary: unit == "sec/op", Verdict: v,
			Base: analysis.Summary{Median: 1, N: 20}, Head: analysis.Summary{Median: 1 + pct/100, N: 20}, ShiftPct: pct, BaseValue: 1, HeadValue: 1 + pct/100,
			Shift: pct / 100, ShiftLo: lo / 100, ShiftHi: hi / 100, DeltaLoPct: lo, DeltaHiPct: hi, PValue: 0.001, Floor: analysis.Floor{Pct: floor}}
	}
	id := saveReport(t, db, &analysis.Report{Verdict: analysis.VerdictRegression, Base: sha(8), Head: sha(9), Options: analysis.Options{Alpha: 0.01},
		Phases: []analysis.Row{
			row("msm_h", "sec/op", analysis.VerdictRegression, 22.5, 20, 25, 2),
			row("ntt", "sec/op", analysis.VerdictNoChange, -3, -5, -1, 2),
			row("synthesis", "sec/op", analysis.VerdictNoChange, 0.5, -0.5, 1.5, 2),
			row("total", "page-faults/op", analysis.VerdictRegression, 60, 50, 70, 1),
		}, Warnings: []string{}}, t0.Add(8*24*time.Hour))
	_, page := do(t, d, fmt.Sprintf("/compare?id=%d", id))
	main, other, ok := strings.Cut(page, `id="other-units"`)
	if !ok {
		t.Fatal("no other units' section")
	}
	zeros := func(s string) []string {
		var xs []string
		for _, m := range regexp.MustCompile(`<line class="zero" x1="([0-9.]+)"`).FindAllStringSubmatch(s, -1) {
			xs = append(xs, m[1])
		}
		return xs
	}
	// sec/op: -5% (ntt's interval) to +25% (msm_h's), 0 at 8 + 5/30 of
	// the 124 pixels between the margins.
	if got := zeros(main); !slices.Equal(got, []string{"28.7", "28.7", "28.7"}) {
		t.Errorf("0 of the sec/op rows at x %v; want 28.7 on each of 3 rows", got)
	}
	for _, want := range []string{
		`<svg class="interval-axis" width="140" height="18" viewBox="0 0 140 18" role="img" aria-label="scale -5% to +25%">`,
		`<line class="tick" data-value="-5" x1="8.0" y1="0" x2="8.0" y2="6"/>`,
		`<line class="tick" data-value="0" x1="28.7" y1="0" x2="28.7" y2="6"/>`,
		`<line class="tick" data-value="25" x1="132.0" y1="0" x2="132.0" y2="6"/>`,
		`<text x="1.0" y="16" text-anchor="start">-5%</text>`, `<text x="28.7" y="16" text-anchor="middle">0</text>`,
		`<text x="139.0" y="16" text-anchor="end">+25%</text>`,
		// msm_h's dot at +22.5% and its floor band of ±2%.
		`<circle cx="121.7" cy="8" r="3.5" fill="#b91c1c"/>`, `<rect class="floor" x="20.4" y="2" width="16.5" height="12" fill="#e5e7eb"/>`,
	} {
		if !strings.Contains(main, want) {
			t.Errorf("the sec/op table lacks %s", want)
		}
	}
	// page-faults/op: its own scale, -1% to +100%; 0 too near the end to
	// be labelled.
	if got := zeros(other); !slices.Equal(got, []string{"9.2"}) || !strings.Contains(other, `aria-label="scale -1% to +100%"`) ||
		strings.Contains(other, `text-anchor="middle">0<`) {
		t.Errorf("the other units' table: 0 at %v; want 9.2 on a scale of -1%% to +100%%, 0 unlabelled", got)
	}
}

// TestChangePageJudgesWithTheRunsConfig stores newer baseline runs of
// the change point's segments under another config, whose thresholds
// (α 0.001, a 30% floor) make msm_h's +25% too small to count: the change
// page compares those runs only, with those thresholds, says so and
// counts the runs of the older config it left out; a comparison of two
// commits made from their runs does the same.
func TestChangePageJudgesWithTheRunsConfig(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := testStore(t)
	d := New(Config{Store: db, Now: func() time.Time { return now }})
	const config = `{"count":6,"max_count":60,"thresholds":{"alpha":0.001,"min_change_pct":30,"min_history":10,"spending":"obrien-fleming","headline":"total","fail_on":"headline"},"primary_units":["sec/op"],"order":"random"}`
	for i := stepAt - segmentCommits; i < stepAt+segmentCommits; i++ {
		for j := range runsPer {
			if _, err := db.SaveRun(ctx, &store.RunRecord{Repo: testRepo, Commit: store.Commit{SHA: sha(i)}, Kind: store.KindBaseline, Machine: "gpu-1",
				ConfigHash: "cfg2", Config: config, Status: analysis.StatusOK, StartedAt: t0.Add(38*24*time.Hour + time.Duration(i*runsPer+j)*time.Minute),
				Samples: samples(i, j, 1.25)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	cq := query("repo", testRepo, "benchmark", bench, "phase", "total", "unit", "sec/op", "since", "all", "at", sha(stepAt))
	cd := getJSON[ChangeData](t, d, "/api/change?"+cq)
	want := RunsConfig{Hash: "cfg2", Stored: true, Alpha: 0.001, MinChangePct: 30, LeftOut: 2 * segmentCommits * runsPer, Others: []string{"cfg"}}
	if !reflect.DeepEqual(cd.Config, want) {
		t.Errorf("config %+v; want %+v", cd.Config, want)
	}
	rep := cd.Report
	if rep.Options.Alpha != 0.001 || rep.Options.MinChangePct != 30 || rep.Runs.Base.Total != segmentCommits*runsPer || rep.Runs.Head.Total != segmentCommits*runsPer {
		t.Errorf("compared with α %v, floor %v%%, %d and %d runs; want α 0.001, 30%%, %d runs a side (cfg2's only)",
			rep.Options.Alpha, rep.Options.MinChangePct, rep.Runs.Base.Total, rep.Runs.Head.Total, segmentCommits*runsPer)
	}
	for _, row := range rep.Phases {
		if row.Phase == "msm_h" && row.Unit == "sec/op" && (row.Verdict != analysis.VerdictNoChange || row.Floor.Pct != 30 || math.Abs(row.ShiftPct-25) > 1) {
			t.Errorf("msm_h: %s, %+.1f%%, floor %v%%; want no change: +25%% is within the config's 30%% floor", row.Verdict, row.ShiftPct, row.Floor.Pct)
		}
	}
	if rep.Verdict != analysis.VerdictNoChange {
		t.Errorf("verdict %s; want no-change under the config's 30%% floor", rep.Verdict)
	}
	_, page := do(t, d, "/change?"+cq)
	for _, w := range []string{
		`<p id="change-config" class="muted">Judged with α = 0.001 and a noise floor of at least 30% (the thresholds of config cfg2, the newest runs&#39;); ` +
			`120 runs of 1 other config (cfg) left out: runs of two configs are not one series.</p>`,
		`<p id="summary" class="summary verdict-no-change">`, `at α = 0.001`, `(at least 30.0%)`,
	} {
		if !strings.Contains(page, w) {
			t.Errorf("change page lacks %s", w)
		}
	}

	// Two commits compared from their runs: each side's newest config.
	cmp := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", sha(stepAt-1), "head", sha(stepAt)))
	if r := cmp.Report; cmp.Source != "runs" || r.Options.Alpha != 0.001 || r.Options.MinChangePct != 30 || r.Runs.Base.Total != runsPer || r.Runs.Head.Total != runsPer ||
		!slices.Contains(r.Warnings, "compared now from the stored runs, judged with α = 0.001 and a noise floor of at least 30% (the thresholds of config cfg2, the newest runs'); "+
			"6 runs of 1 other config (cfg) left out: runs of two configs are not one series") ||
		!slices.Contains(r.Warnings, "of base's runs, 6 runs of 1 other config (cfg) left out: only those of its newest run's config are compared") {
		t.Errorf("compare from runs: α %v, floor %v%%, %d and %d runs, warnings %q; want cfg2's thresholds and %d runs a side",
			r.Options.Alpha, r.Options.MinChangePct, r.Runs.Base.Total, r.Runs.Head.Total, r.Warnings, runsPer)
	}
}

// TestChangePageGivesOneSize renders a change page whose trend's medians
// moved +10.5% while the segments' comparison estimates +10.3% [+9.8,
// +10.9] (the report a user saw both on): the heading, the summary and
// the table say +10.3% with its interval, and +10.5% is nowhere.
func TestChangePageGivesOneSize(t *testing.T) {
	t.Parallel()
	d := New(Config{Store: nil})
	key := analysis.Key{Benchmark: bench, Phase: "total", Unit: "sec/op"}
	rep := &analysis.Report{Verdict: analysis.VerdictRegression, Base: sha(1), Head: sha(2), Options: analysis.Options{Alpha: 0.01},
		Phases: []analysis.Row{{Key: key, Primary: true, Headline: true, Verdict: analysis.VerdictRegression,
			Base: analysis.Summary{Median: 1, N: 60}, Head: analysis.Summary{Median: 1.105, N: 60}, ShiftPct: 10.3, BaseValue: 1, HeadValue: 1.103,
			Shift: 0.103, ShiftLo: 0.098, ShiftHi: 0.109, DeltaLoPct: 9.8, DeltaHiPct: 10.9, PValue: 0.001, Floor: analysis.Floor{Pct: 1}}},
		Warnings: []string{}}
	ch := analysis.TrendChange{Index: 5, Commit: sha(2), PValue: 0.002, Before: 1, After: 1.105, ChangePct: 10.5, Direction: "regression"}
	data := &ChangeData{Repo: testRepo, Key: key, Machine: "gpu-1", Since: "all", Change: ch, Good: sha(1), Bad: sha(2),
		Report: rep, View: render.NewView(rep, htmlFormatter), Bisect: []BisectHint{}}
	data.Size = changeSize(rep, data.View, key, ch)
	var b bytes.Buffer
	if err := d.pages["change"].Execute(&b, data); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{
		`<h1>+10.3% [+9.8, +10.9] regression at ` + short(sha(2)) + `: `,
		`on, 1.000s → 1.103s: +10.3% [+9.8, +10.9], regression (the segments' comparison below; the trend's change point there has p=0.002);`,
		`<td class="num"><b>+10.3% [+9.8, +10.9]</b></td>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("change page lacks %s", want)
		}
	}
	if strings.Contains(page, "10.5") || strings.Contains(page, "1.105") {
		t.Errorf("change page gives the trend's +10.5%% (1 → 1.105) beside the estimate:\n%s", page)
	}
	if *data.Size.Pct != 10.3 || *data.Size.LoPct != 9.8 || *data.Size.HiPct != 10.9 {
		t.Errorf("size %+v; want +10.3%% [+9.8, +10.9]", data.Size)
	}
	// Where the segments' comparison has no row of the series, the
	// trend's change of medians is the one size.
	if s := changeSize(&analysis.Report{Verdict: analysis.VerdictError}, render.NewView(&analysis.Report{}, htmlFormatter), key, ch); s.Source != "trend" ||
		*s.Pct != 10.5 || s.LoPct != nil || s.Delta != "+10.5%" || s.Values != "1 → 1.105 sec/op" {
		t.Errorf("size without a row: %+v; want the trend's +10.5%%", s)
	}
	// A trend's change from a median of 0 has no percentage: null in the
	// JSON, which still encodes.
	zero := ch
	zero.Before, zero.ChangePct = 0, math.Inf(1)
	if s := changeSize(&analysis.Report{}, render.NewView(&analysis.Report{}, htmlFormatter), key, zero); s.Pct != nil {
		t.Errorf("size of a change from 0: %v; want none", *s.Pct)
	} else if b, err := json.Marshal(s); err != nil || !strings.Contains(string(b), `"pct":null`) {
		t.Errorf("size of a change from 0 as JSON: %s %v", b, err)
	}
}

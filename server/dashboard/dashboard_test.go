package dashboard

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// The synthetic history: 30 commits of a GitHub repository on main, 3
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
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "perfbot.db")
	db, err := store.Open(ctx, path, store.Options{})
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
		for j := range 3 {
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
	if err := analysis.RenderJSON(&rep, &analysis.Report{Verdict: analysis.VerdictImprovement, Base: sha(1), Head: sha(2),
		Phases: []analysis.Row{{Key: analysis.Key{Benchmark: bench, Phase: "ntt", Unit: "sec/op"}, Verdict: analysis.VerdictImprovement,
			Base: analysis.Summary{Median: 0.1, N: 10}, Head: analysis.Summary{Median: 0.08, N: 10}, ShiftPct: -20, BaseValue: 0.1, HeadValue: 0.08, Shift: -0.02,
			DeltaLoPct: -22.5, DeltaHiPct: -17.25, PValue: 0.001}},
		Warnings: []string{}}); err != nil {
		t.Fatal(err)
	}
	if _, err := db.SaveComparison(ctx, &store.Comparison{Repo: testRepo, BaseSHA: sha(1), HeadSHA: sha(2),
		Verdict: "improvement", Report: rep.String(), Markdown: "…", CreatedAt: t0.Add(2 * 24 * time.Hour)}); err != nil {
		t.Fatal(err)
	}
	return db
}

func newTestDashboard(t *testing.T, jobs func(context.Context, int) ([]queue.Job, error)) *Dashboard {
	return New(Config{Store: testStore(t), Jobs: jobs, Now: func() time.Time { return now }})
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
		want := "msm_h sec/op,ntt sec/op,synthesis sec/op,total page-faults/op,total sec/op"
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
		// The stored comparison is listed, linked to its page.
		if len(idx.Comparisons) != 1 || idx.Comparisons[0].Head != sha(2) || idx.Comparisons[0].Verdict != "improvement" ||
			idx.Comparisons[0].CompareURL != "/compare?"+query("base", sha(1), "head", sha(2), "repo", testRepo) {
			t.Errorf("recent comparisons %+v; want the stored improvement of %s against %s", idx.Comparisons, sha(2)[:7], sha(1)[:7])
		}
		if !strings.Contains(page, `id="recent-comparisons"`) || !strings.Contains(page, `class="verdict-improvement">improvement<`) {
			t.Errorf("index page lacks the recent comparisons")
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
		code, page := do(t, d, "/trend?"+trendQ)
		for _, want := range []string{`<svg id="trend-svg"`, `stroke:#D62728`, `class="commit change-point" data-commit="` + sha(stepAt) + `"`,
			`href="https://github.com/perfbot/prover/commit/` + sha(5) + `"`, `class="compare-link"`} {
			if code != 200 || !strings.Contains(page, want) {
				t.Errorf("trend page (%d) lacks %s", code, want)
			}
		}
		if strings.Contains(page, "<?xml") {
			t.Error("trend page inlines the chart's XML declaration")
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
		if code != 200 || !strings.Contains(page, `id="verdict" class="verdict-regression"`) || !strings.Contains(page, "nothing was measured") {
			t.Errorf("compare page (%d) lacks the verdict or the source", code)
		}
		// The sentence the PR comment opens with; the verdict's series in
		// the main table, the other units' apart.
		if !strings.HasPrefix(cd.Summary, "Regression. Head is worse than base in ") || !strings.Contains(cd.Summary, "msm_h") ||
			!strings.Contains(page, `<p id="summary" class="verdict-regression">Regression. Head is worse than base in msm_h`) {
			t.Errorf("summary %q, or the page lacks it", cd.Summary)
		}
		main, other, ok := strings.Cut(page, `id="compare-other"`)
		if !ok || strings.Contains(main, "page-faults/op") || !strings.Contains(other, "page-faults/op") || !strings.Contains(main, "msm_h") {
			t.Errorf("page-faults/op should be in the other units' table only, msm_h in the main one")
		}
	})

	t.Run("CompareTakesShortSHAs", func(t *testing.T) {
		full := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", cmpBase, "head", cmpHead))
		short := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", cmpBase[:7], "head", strings.ToUpper(cmpHead[:10])))
		if short.Base != cmpBase || short.Head != cmpHead || short.Report == nil || short.Report.Verdict != full.Report.Verdict || len(short.Rows) != len(full.Rows) {
			t.Errorf("short SHAs %s, %s: base %s head %s, %d rows; want the full comparison of %s and %s (%d rows)",
				cmpBase[:7], cmpHead[:10], short.Base, short.Head, len(short.Rows), cmpBase, cmpHead, len(full.Rows))
		}
	})

	t.Run("CompareShowsTheStoredComparison", func(t *testing.T) {
		cd := getJSON[CompareData](t, d, "/api/compare?"+query("repo", testRepo, "base", sha(1), "head", sha(2)))
		if cd.Source != "stored" || cd.ComparisonID == 0 || cd.Report.Verdict != analysis.VerdictImprovement || len(cd.Report.Phases) != 1 {
			t.Fatalf("got source %s id %d report %+v; want the stored improvement", cd.Source, cd.ComparisonID, cd.Report)
		}
		_, page := do(t, d, "/compare?"+query("repo", testRepo, "base", sha(1), "head", sha(2)))
		if !strings.Contains(page, "Stored comparison #") || !strings.Contains(page, "-20.0% [-22.5, -17.2]") {
			t.Errorf("compare page lacks the stored comparison's row")
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
	created := t0
	jobs := []queue.Job{
		{ID: 5, Kind: queue.KindCompare, Queue: "gpu", State: "available", CreatedAt: created},
		{ID: 4, Kind: queue.KindCompare, Queue: "gpu", State: "running", CreatedAt: created},
		{ID: 3, Kind: queue.KindNotify, Queue: "control", State: "completed", CreatedAt: created, FinalizedAt: &created},
		{ID: 2, Kind: queue.KindBaseline, Queue: "gpu", State: "retryable", CreatedAt: created},
		{ID: 1, Kind: queue.KindBisect, Queue: "gpu", State: "discarded", CreatedAt: created, FinalizedAt: &created},
	}
	d := New(Config{Store: nil, Jobs: func(_ context.Context, limit int) ([]queue.Job, error) {
		if limit != jobsLimit {
			t.Errorf("limit %d; want %d", limit, jobsLimit)
		}
		return jobs, nil
	}})
	jd := getJSON[JobsData](t, d, "/api/jobs")
	ids := func(js []queue.Job) (out []int64) {
		for _, j := range js {
			out = append(out, j.ID)
		}
		return out
	}
	if fmt.Sprint(ids(jd.Queued), ids(jd.Running), ids(jd.Finished)) != "[5 2] [4] [3 1]" || !jd.Available {
		t.Errorf("queued %v running %v finished %v; want [5 2] [4] [3 1]", ids(jd.Queued), ids(jd.Running), ids(jd.Finished))
	}
	code, page := do(t, d, "/jobs")
	if code != 200 || !strings.Contains(page, `<tr class="job" data-id="4" data-state="running">`) {
		t.Errorf("jobs page (%d) lacks the running job", code)
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
		{"/api/trend?" + query("repo", testRepo, "benchmark", bench, "phase", "nope"), 404, "pick a series that has data from the index"},
		{"/api/trend?" + query("repo", testRepo, "benchmark", bench, "phase", "total", "since", "1d"), 404, "widen the window with since=all"},
		{"/api/phases?" + query("repo", testRepo), 400, "benchmark is required"},
		{"/api/compare?" + query("repo", testRepo, "base", cmpBase), 400, "base and head are required"},
		{"/api/compare?" + query("repo", testRepo, "base", "HEAD~1", "head", cmpHead), 400, "want hexadecimal commit SHAs"},
		{"/api/compare?" + query("repo", testRepo, "base", "ffffffff", "head", cmpHead), 404, "no stored commit of " + testRepo + " begins with ffffffff: pick commits with runs"},
		{"/api/compare?" + query("repo", testRepo, "base", sha(999), "head", cmpHead), 404, "no stored runs of commit " + sha(999)},
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

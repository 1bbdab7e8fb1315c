package dashboard

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchunit"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// IndexData is the index page's data: every series with baseline runs.
type IndexData struct {
	Repos []IndexRepo `json:"repos"`
	// Comparisons are the newest stored comparisons (recentComparisons
	// of them), newest first.
	Comparisons []IndexComparison `json:"comparisons"`
}

// An IndexComparison is a stored comparison as the index lists it.
type IndexComparison struct {
	ID         int64     `json:"id"`
	Repo       string    `json:"repo"`
	Base       string    `json:"base"`
	Head       string    `json:"head"`
	Verdict    string    `json:"verdict"`
	CreatedAt  time.Time `json:"created_at"`
	CompareURL string    `json:"compare_url"`
}

// recentComparisons is how many stored comparisons the index lists.
const recentComparisons = 20

// An IndexRepo is one repository's benchmarks.
type IndexRepo struct {
	Repo       string           `json:"repo"`
	Benchmarks []IndexBenchmark `json:"benchmarks"`
}

// An IndexBenchmark is one benchmark's series and, when it has a total
// phase, the link to its stacked per-phase view.
type IndexBenchmark struct {
	Benchmark string        `json:"benchmark"`
	PhasesURL string        `json:"phases_url,omitempty"`
	Series    []IndexSeries `json:"series"`
}

// An IndexSeries is one (phase, unit) and its trend page.
type IndexSeries struct {
	Phase    string `json:"phase"`
	Unit     string `json:"unit"`
	TrendURL string `json:"trend_url"`
}

func (d *Dashboard) index(r *http.Request) (any, error) {
	series, err := d.cfg.Store.TrendSeries(r.Context())
	if err != nil {
		return nil, err
	}
	recent, err := d.cfg.Store.RecentComparisons(r.Context(), recentComparisons)
	if err != nil {
		return nil, err
	}
	data := &IndexData{Repos: []IndexRepo{}, Comparisons: []IndexComparison{}}
	for _, c := range recent {
		data.Comparisons = append(data.Comparisons, IndexComparison{ID: c.ID, Repo: c.Repo, Base: c.BaseSHA, Head: c.HeadSHA,
			Verdict: c.Verdict, CreatedAt: c.CreatedAt, CompareURL: compareURL(c.Repo, c.BaseSHA, c.HeadSHA)})
	}
	for _, s := range series {
		if n := len(data.Repos); n == 0 || data.Repos[n-1].Repo != s.Repo {
			data.Repos = append(data.Repos, IndexRepo{Repo: s.Repo})
		}
		repo := &data.Repos[len(data.Repos)-1]
		if n := len(repo.Benchmarks); n == 0 || repo.Benchmarks[n-1].Benchmark != s.Benchmark {
			repo.Benchmarks = append(repo.Benchmarks, IndexBenchmark{Benchmark: s.Benchmark})
		}
		b := &repo.Benchmarks[len(repo.Benchmarks)-1]
		b.Series = append(b.Series, IndexSeries{Phase: s.Phase, Unit: s.Unit, TrendURL: trendURL(s.Repo, s.Key, "")})
		if s.Phase == totalPhase && s.Unit == defaultUnit {
			b.PhasesURL = phasesURL(s.Repo, s.Benchmark, s.Unit)
		}
	}
	return data, nil
}

const (
	totalPhase   = "total"
	defaultUnit  = "sec/op"
	defaultSince = "90d"
)

// TrendData is the trend page's data: the trend as perfbot trend --format
// json writes it, and links for each commit.
type TrendData struct {
	Trend *analysis.Trend `json:"trend"`
	Since string          `json:"since"`
	// Links has one entry per Trend.Commits, in its order.
	Links     []CommitLinks `json:"links"`
	PhasesURL string        `json:"phases_url,omitempty"`
	// Chart is the inline SVG chart (chart.Trend); not in the JSON.
	Chart template.HTML `json:"-"`
	// Rows are the table's formatted values; not in the JSON.
	Rows []trendRow `json:"-"`
	// Query is the page's query string, for its JSON link.
	Query template.URL `json:"-"`
}

// CommitLinks are where a commit of a trend links to: the comparison
// with the commit before it in the trend, and the commit on GitHub when
// the repository is there.
type CommitLinks struct {
	Commit     string `json:"commit"`
	CompareURL string `json:"compare_url,omitempty"`
	CommitURL  string `json:"commit_url,omitempty"`
}

type trendRow struct {
	analysis.TrendCommit
	CommitURL, CompareURL           string
	Short, Median, Interval, Change string
}

func (d *Dashboard) trend(r *http.Request) (any, error) {
	q := r.URL.Query()
	repo, key, err := seriesParams(q, true)
	if err != nil {
		return nil, err
	}
	sinceText := cmp.Or(q.Get("since"), defaultSince)
	since, err := parseSince(sinceText, d.cfg.Now())
	if err != nil {
		return nil, err
	}
	t, err := d.loadTrend(r, repo, key, since, sinceText, q.Get("machine"))
	if err != nil {
		return nil, err
	}
	svg, err := trendSVG(t)
	if err != nil {
		return nil, err
	}
	data := &TrendData{Trend: t, Since: sinceText, Chart: svg, Links: make([]CommitLinks, len(t.Commits)), Query: template.URL(q.Encode())}
	factor, _ := t.AxisScale()
	changes := map[int]analysis.TrendChange{}
	for _, c := range t.ChangePoints {
		changes[c.Index] = c
	}
	for i, c := range t.Commits {
		l := CommitLinks{Commit: c.Commit, CommitURL: commitURL(repo, c.Commit)}
		if i > 0 {
			l.CompareURL = compareURL(repo, t.Commits[i-1].Commit, c.Commit)
		}
		data.Links[i] = l
		row := trendRow{TrendCommit: c, CommitURL: l.CommitURL, CompareURL: l.CompareURL, Short: short(c.Commit), Median: number(c.Median / factor)}
		if !math.IsInf(c.Lo, 0) && !math.IsInf(c.Hi, 0) {
			row.Interval = number(c.Lo/factor) + " – " + number(c.Hi/factor)
		}
		if ch, ok := changes[i]; ok {
			row.Change = fmt.Sprintf("%s %s (p=%.3g)", pct(ch.ChangePct), ch.Direction, ch.PValue)
		}
		data.Rows = append(data.Rows, row)
	}
	if key.Phase == totalPhase {
		data.PhasesURL = phasesURL(repo, key.Benchmark, key.Unit)
	}
	return data, nil
}

// loadTrend reads a series' baseline runs and charts them as perfbot
// trend does (commits in the order of their first runs).
func (d *Dashboard) loadTrend(r *http.Request, repo string, key analysis.Key, since time.Time, sinceText, machine string) (*analysis.Trend, error) {
	from := since
	if from.IsZero() {
		from = time.Unix(0, 0).UTC() // the store keeps a zero time as NULL
	}
	points, err := d.cfg.Store.Trend(r.Context(), repo, key, from)
	if err != nil {
		return nil, err
	}
	if len(points) == 0 {
		return nil, notFound("no baseline runs of %s in %s since %s (since=%s): widen the window with since=all, "+
			"or pick a series that has data from the index (/)", key, repo, since.UTC().Format(time.DateOnly), sinceText)
	}
	runs := make([]analysis.TrendRun, len(points))
	for i, p := range points {
		runs[i] = analysis.TrendRun{Commit: p.Commit, Machine: p.Machine, Started: p.StartedAt, Value: p.Value}
	}
	t, err := analysis.NewTrend(analysis.TrendInput{Repo: repo, Key: key, Since: since, Runs: runs, Machine: machine}, analysis.TrendOptions{})
	if errors.Is(err, analysis.ErrUnknownMachine) {
		return nil, badRequest("machine=%s: %v; pass one of those, or leave machine out to chart the one with the most runs", machine, err)
	}
	return t, err
}

// seriesParams reads repo, benchmark, phase (when withPhase) and unit
// (default sec/op).
func seriesParams(q url.Values, withPhase bool) (string, analysis.Key, error) {
	repo, bench := q.Get("repo"), strings.TrimPrefix(q.Get("benchmark"), "Benchmark")
	switch {
	case repo == "":
		return "", analysis.Key{}, badRequest("repo is required: the repository as the index (/) lists it, e.g. ?repo=owner/name")
	case bench == "":
		return "", analysis.Key{}, badRequest("benchmark is required: the benchmark's name without the Benchmark prefix and the phase, " +
			"e.g. benchmark=Prove/circuit=sha256/constraints=65536/backend=cpu; the index (/) lists them")
	case withPhase && !q.Has("phase"):
		return "", analysis.Key{}, badRequest("phase is required: e.g. phase=total (the whole proof) or phase=msm_h; phase= (empty) for a benchmark without phases")
	}
	key := analysis.Key{Benchmark: bench, Phase: q.Get("phase"), Unit: cmp.Or(q.Get("unit"), defaultUnit)}
	return repo, key, nil
}

var sinceRE = regexp.MustCompile(`^([0-9]+)([hdw])$`)

// parseSince reads since: "all", a duration back from now in hours, days
// or weeks (36h, 90d, 12w) or a date (YYYY-MM-DD, midnight UTC).
func parseSince(s string, now time.Time) (time.Time, error) {
	if s == "all" {
		return time.Time{}, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	m := sinceRE.FindStringSubmatch(s)
	n, err := 0, error(nil)
	if m != nil {
		n, err = strconv.Atoi(m[1])
	}
	if m == nil || err != nil || n <= 0 || n > 100000 {
		return time.Time{}, badRequest("since=%s: want a duration back from now such as 36h, 90d or 12w, a date such as 2026-01-31, or all", s)
	}
	unit := map[string]time.Duration{"h": time.Hour, "d": 24 * time.Hour, "w": 7 * 24 * time.Hour}[m[2]]
	return now.Add(-time.Duration(n) * unit), nil
}

// PhasesData is the stacked per-phase view's data: per commit of the
// total's trend, the median of total and of each phase.
type PhasesData struct {
	Repo      string `json:"repo"`
	Benchmark string `json:"benchmark"`
	Unit      string `json:"unit"`
	Machine   string `json:"machine"`
	Since     string `json:"since"`
	// Phases are the stacked phases (GPU sub-steps such as
	// msm_h/step=sort are left out: their phase counts them already).
	Phases  []string      `json:"phases"`
	Commits []PhaseCommit `json:"commits"`
	Notes   []string      `json:"notes"`
	// Chart is the inline stacked-bar SVG; not in the JSON.
	Chart template.HTML `json:"-"`
	// Scale is the unit the chart and table show values in, factor
	// what a value is divided by to show in it.
	Scale  string `json:"-"`
	factor float64
}

// A PhaseCommit is one commit's total and the phases that make it up.
type PhaseCommit struct {
	Commit string  `json:"commit"`
	Total  float64 `json:"total"`
	// Phases holds each phase's median at this commit; a phase the
	// commit's runs did not measure is absent.
	Phases map[string]float64 `json:"phases"`
	// Other is total minus the sum of the phases (time no phase
	// accounts for); 0 when the phases add up to more.
	Other float64 `json:"other"`
	CommitLinks
}

func (d *Dashboard) phases(r *http.Request) (any, error) {
	q := r.URL.Query()
	repo, key, err := seriesParams(q, false)
	if err != nil {
		return nil, err
	}
	sinceText := cmp.Or(q.Get("since"), defaultSince)
	since, err := parseSince(sinceText, d.cfg.Now())
	if err != nil {
		return nil, err
	}
	series, err := d.cfg.Store.TrendSeries(r.Context())
	if err != nil {
		return nil, err
	}
	var phases []string
	for _, s := range series {
		if s.Repo == repo && s.Benchmark == key.Benchmark && s.Unit == key.Unit && s.Phase != totalPhase && s.Phase != "" && !strings.Contains(s.Phase, "/") {
			phases = append(phases, s.Phase)
		}
	}
	key.Phase = totalPhase
	total, err := d.loadTrend(r, repo, key, since, sinceText, q.Get("machine"))
	if err != nil {
		return nil, err
	}
	phases = orderPhases(phases)
	data := &PhasesData{Repo: repo, Benchmark: key.Benchmark, Unit: key.Unit, Machine: total.Machine, Since: sinceText,
		Phases: []string{}, Notes: slices.Clone(total.Notes)}
	data.Commits = make([]PhaseCommit, len(total.Commits))
	for i, c := range total.Commits {
		data.Commits[i] = PhaseCommit{Commit: c.Commit, Total: c.Median, Phases: map[string]float64{},
			CommitLinks: CommitLinks{Commit: c.Commit, CommitURL: commitURL(repo, c.Commit)}}
		if i > 0 {
			data.Commits[i].CompareURL = compareURL(repo, total.Commits[i-1].Commit, c.Commit)
		}
	}
	pos := make(map[string]int, len(total.Commits))
	for i, c := range total.Commits {
		pos[c.Commit] = i
	}
	for _, p := range phases {
		pk := key
		pk.Phase = p
		t, err := d.loadTrend(r, repo, pk, since, sinceText, total.Machine)
		var re *requestError
		if errors.As(err, &re) {
			continue // no runs of this phase on the total's machine in the window
		}
		if err != nil {
			return nil, err
		}
		data.Phases = append(data.Phases, p)
		for _, c := range t.Commits {
			if i, ok := pos[c.Commit]; ok {
				data.Commits[i].Phases[p] = c.Median
			}
		}
	}
	for i := range data.Commits {
		c := &data.Commits[i]
		sum := 0.0
		for _, v := range c.Phases {
			sum += v
		}
		c.Other = max(0, c.Total-sum)
	}
	factor, label := total.AxisScale()
	data.Scale, data.factor = label, factor
	if data.Chart, err = stackedSVG(data, factor, label); err != nil {
		return nil, err
	}
	return data, nil
}

// phaseOrder is the prover's phase order; other phases follow by name.
var phaseOrder = []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "assemble"}

func orderPhases(ps []string) []string {
	slices.SortFunc(ps, func(a, b string) int {
		ia, ib := slices.Index(phaseOrder, a), slices.Index(phaseOrder, b)
		if ia < 0 {
			ia = len(phaseOrder)
		}
		if ib < 0 {
			ib = len(phaseOrder)
		}
		return cmp.Or(cmp.Compare(ia, ib), strings.Compare(a, b))
	})
	return slices.Compact(ps)
}

// CompareData is the compare page's data: the stored comparison of head
// against base when there is one, or else a comparison of the stored
// runs of the two commits made now (nothing is measured).
type CompareData struct {
	Repo string `json:"repo"`
	Base string `json:"base"`
	Head string `json:"head"`
	// Source is "stored" (ComparisonID's report) or "runs" (compared
	// now from the commits' stored runs).
	Source       string           `json:"source"`
	ComparisonID int64            `json:"comparison_id,omitempty"`
	CreatedAt    time.Time        `json:"created_at,omitzero"`
	Report       *analysis.Report `json:"report"`
	BaseURL      string           `json:"base_url,omitempty"`
	HeadURL      string           `json:"head_url,omitempty"`
	// Summary is the report's headline, the sentence the PR comment and
	// the check's title open with.
	Summary string `json:"summary"`
	// Rows are the primary units' series, which the verdict rests on;
	// Others the rest (counters, memory, wall time), shown apart.
	Rows   []compareRow `json:"-"`
	Others []compareRow `json:"-"`
}

type compareRow struct {
	Name, Unit, Base, Head, Delta, P, Verdict, Reason string
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{4,64}$`)

func (d *Dashboard) compare(r *http.Request) (any, error) {
	q := r.URL.Query()
	repo, base, head := q.Get("repo"), strings.ToLower(q.Get("base")), strings.ToLower(q.Get("head"))
	switch {
	case repo == "":
		return nil, badRequest("repo is required: the repository as the index (/) lists it")
	case base == "" || head == "":
		return nil, badRequest("base and head are required: two commit SHAs, e.g. ?repo=R&base=SHA1&head=SHA2 (a unique beginning of 4 or more digits will do); a trend page links each commit to its comparison with the one before")
	case !shaRE.MatchString(base) || !shaRE.MatchString(head):
		return nil, badRequest("base=%s head=%s: want hexadecimal commit SHAs (or a unique beginning of 4 or more digits), as the trend pages show them", base, head)
	}
	ctx := r.Context()
	// A short SHA is what people paste: it names the one stored commit it
	// begins.
	for _, sha := range []*string{&base, &head} {
		if len(*sha) >= 40 {
			continue
		}
		full, err := d.cfg.Store.ResolveCommit(ctx, repo, *sha)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, notFound("%v: pick commits with runs (a trend page links each commit to its comparison with the one before), or measure it with perfbot run", err)
		case errors.Is(err, store.ErrAmbiguous):
			return nil, badRequest("%v: give more of it", err)
		case err != nil:
			return nil, err
		}
		*sha = full
	}
	data := &CompareData{Repo: repo, Base: base, Head: head, BaseURL: commitURL(repo, base), HeadURL: commitURL(repo, head)}
	stored, err := d.cfg.Store.LatestComparison(ctx, repo, base, head)
	switch {
	case err == nil && stored.Report != "":
		var rep analysis.Report
		if err := json.Unmarshal([]byte(stored.Report), &rep); err != nil {
			return nil, fmt.Errorf("comparison %d: decode report: %w", stored.ID, err)
		}
		data.Source, data.ComparisonID, data.CreatedAt, data.Report = "stored", stored.ID, stored.CreatedAt, &rep
	case err == nil || errors.Is(err, store.ErrNotFound):
		rep, err := d.compareRuns(r, repo, base, head)
		if err != nil {
			return nil, err
		}
		data.Source, data.Report = "runs", rep
	default:
		return nil, err
	}
	data.Summary = analysis.Headline(data.Report)
	// A report stored by an older perfbot marks no row primary: then
	// every row is shown as one the verdict rests on.
	legacy := !slices.ContainsFunc(data.Report.Phases, func(r analysis.Row) bool { return r.Primary })
	for _, row := range data.Report.Phases {
		r := compareRow{
			Name: seriesName(row.Key), Unit: row.Unit,
			Base: scaled(row.BaseValue, row.Unit), Head: scaled(row.HeadValue, row.Unit),
			Delta: pct(row.Change()) + pctInterval(row.DeltaLoPct, row.DeltaHiPct), P: fmt.Sprintf("%.3g", row.PValue),
			Verdict: string(row.Verdict), Reason: row.Reason,
		}
		if row.Primary || legacy {
			data.Rows = append(data.Rows, r)
		} else {
			data.Others = append(data.Others, r)
		}
	}
	return data, nil
}

// compareRuns compares the stored runs of head against those of base, as
// perfbot compare would, with the baseline history of the head's machine
// and configuration for noise floors.
func (d *Dashboard) compareRuns(r *http.Request, repo, base, head string) (*analysis.Report, error) {
	ctx := r.Context()
	side := func(sha string) ([]store.RunRecord, error) {
		runs, err := d.cfg.Store.Runs(ctx, store.RunQuery{Repo: repo, Commits: []string{sha}})
		if err != nil {
			return nil, err
		}
		if len(runs) == 0 {
			return nil, notFound("no stored runs of commit %s in %s and no stored comparison: pick commits with runs "+
				"(a trend page links each commit to its comparison with the one before), or measure it with perfbot run", sha, repo)
		}
		return runs, nil
	}
	baseRuns, err := side(base)
	if err != nil {
		return nil, err
	}
	headRuns, err := side(head)
	if err != nil {
		return nil, err
	}
	last := headRuns[len(headRuns)-1]
	hist, err := d.cfg.Store.History(ctx, store.HistoryQuery{Repo: repo, Machine: last.Machine, ConfigHash: last.ConfigHash, Limit: 100})
	if err != nil {
		return nil, err
	}
	in := analysis.Input{BaseRev: base, HeadRev: head, History: hist}
	for i := range baseRuns {
		in.Base = append(in.Base, baseRuns[i].Run())
	}
	for i := range headRuns {
		in.Head = append(in.Head, headRuns[i].Run())
	}
	rep := analysis.Compare(in, analysis.Options{})
	if machines := runMachines(baseRuns, headRuns); len(machines) > 1 {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("the runs come from %d machines (%s): differences may be the machines'",
			len(machines), strings.Join(machines, ", ")))
	}
	return rep, nil
}

func runMachines(sides ...[]store.RunRecord) []string {
	var ms []string
	for _, runs := range sides {
		for _, r := range runs {
			ms = append(ms, r.Machine)
		}
	}
	slices.Sort(ms)
	return slices.Compact(ms)
}

// JobsData is the job queue page's data.
type JobsData struct {
	// Available is false when perfbot serve has no job queue (SQLite).
	Available bool        `json:"available"`
	Note      string      `json:"note,omitempty"`
	Queued    []queue.Job `json:"queued"`
	Running   []queue.Job `json:"running"`
	Finished  []queue.Job `json:"finished"`
}

// jobsLimit is how many of the newest jobs the page lists.
const jobsLimit = 200

func (d *Dashboard) jobs(r *http.Request) (any, error) {
	data := &JobsData{Queued: []queue.Job{}, Running: []queue.Job{}, Finished: []queue.Job{}}
	if d.cfg.Jobs == nil {
		data.Note = "this store has no job queue: the queue lives in PostgreSQL, where perfbot serve and perfbot worker share it (--db postgres://…)"
		return data, nil
	}
	jobs, err := d.cfg.Jobs(r.Context(), jobsLimit)
	if err != nil {
		return nil, err
	}
	data.Available = true
	for _, j := range jobs {
		switch j.State {
		case "running":
			data.Running = append(data.Running, j)
		case "completed", "cancelled", "discarded":
			data.Finished = append(data.Finished, j)
		default: // available, scheduled, pending, retryable
			data.Queued = append(data.Queued, j)
		}
	}
	return data, nil
}

// URLs of the pages.

func trendURL(repo string, key analysis.Key, since string) string {
	v := url.Values{"repo": {repo}, "benchmark": {key.Benchmark}, "phase": {key.Phase}, "unit": {key.Unit}}
	if since != "" {
		v.Set("since", since)
	}
	return "/trend?" + v.Encode()
}

func phasesURL(repo, bench, unit string) string {
	return "/phases?" + url.Values{"repo": {repo}, "benchmark": {bench}, "unit": {unit}}.Encode()
}

func compareURL(repo, base, head string) string {
	return "/compare?" + url.Values{"repo": {repo}, "base": {base}, "head": {head}}.Encode()
}

var (
	ownerNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+$`)
	githubRE    = regexp.MustCompile(`^(?:https://github\.com/|git@github\.com:|ssh://git@github\.com/)([A-Za-z0-9][A-Za-z0-9-]*/[A-Za-z0-9._-]+?)(?:\.git)?/?$`)
)

// commitURL returns the commit's page on GitHub when repo names a GitHub
// repository (owner/name, as perfbot serve stores it, or a GitHub clone
// URL), and "" otherwise (a local path, another host).
func commitURL(repo, sha string) string {
	name := ""
	if m := githubRE.FindStringSubmatch(repo); m != nil {
		name = m[1]
	} else if ownerNameRE.MatchString(repo) {
		name = repo
	}
	if name == "" {
		return ""
	}
	return "https://github.com/" + name + "/commit/" + sha
}

// Formatting.

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func number(x float64) string { return strconv.FormatFloat(x, 'g', 4, 64) }

func pct(x float64) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", x)
}

// pctInterval formats a change's interval after its Δ: " [-1.8, +4.0]",
// or "" without one (a report stored before intervals, or too few runs).
func pctInterval(lo, hi float64) string {
	if math.IsNaN(lo) || math.IsInf(lo, 0) || math.IsNaN(hi) || math.IsInf(hi, 0) {
		return ""
	}
	return fmt.Sprintf(" [%+.1f, %+.1f]", lo, hi)
}

// scaled formats a value in its unit as benchstat does (1.23s, 4.5G).
func scaled(v float64, unit string) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	s := benchunit.Scale(v, benchunit.ClassOf(unit))
	if unit == defaultUnit {
		return s + "s"
	}
	return s
}

// seriesName is a key's benchmark and phase, as benchfmt names them.
func seriesName(k analysis.Key) string {
	if k.Phase == "" {
		return k.Benchmark
	}
	return k.Benchmark + "/phase=" + k.Phase
}

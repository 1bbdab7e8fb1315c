package dashboard

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"html/template"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/store"
	"github.com/perfbot/perfbot/store/queue"
)

// IndexData is the front page's data: what changed lately (stored
// comparisons, change points of each benchmark's headline series) and
// every benchmark, its headline series first, with every series with
// baseline runs.
type IndexData struct {
	Repos []IndexRepo `json:"repos"`
	// Comparisons are the newest stored comparisons (recentComparisons
	// of them), newest first.
	Comparisons []IndexComparison `json:"comparisons"`
	// Changes are the newest change points of the headline series
	// (recentChanges of them), newest first.
	Changes []IndexChange `json:"changes"`
}

// An IndexComparison is a stored comparison as the index lists it.
type IndexComparison struct {
	ID   int64  `json:"id"`
	Repo string `json:"repo"`
	// PR is the pull request it was made for (0: none) and PullURL that
	// pull request on GitHub.
	PR         int       `json:"pr,omitempty"`
	PullURL    string    `json:"pull_url,omitempty"`
	Base       string    `json:"base"`
	Head       string    `json:"head"`
	Verdict    string    `json:"verdict"`
	CreatedAt  time.Time `json:"created_at"`
	CompareURL string    `json:"compare_url"`
	// BaseArgs and HeadArgs are the sides' variant arguments (perfbot
	// compare --base-args, --head-args), from the stored report; absent
	// for none.
	BaseArgs []string `json:"base_args,omitempty"`
	HeadArgs []string `json:"head_args,omitempty"`
	// AA is true for a comparison of a commit with itself under the same
	// arguments: whatever it found is noise. One commit with different
	// arguments on each side is an A/B of the arguments.
	AA bool `json:"aa"`
}

// Variants reports whether the sides ran with different arguments.
func (c IndexComparison) Variants() bool { return !slices.Equal(c.BaseArgs, c.HeadArgs) }

// isAA reports whether a comparison of head against base is an A/A: one
// commit, the same arguments on both sides (none, or the same variant,
// as analysis's A/A warning has it). Different arguments make it an A/B
// of the arguments, whose verdict is no false alarm.
func isAA(base, head string, baseArgs, headArgs []string) bool {
	return base != "" && base == head && slices.Equal(baseArgs, headArgs)
}

// How many stored comparisons, change points and sparkline commits the
// front page shows.
const (
	recentComparisons = 20
	recentChanges     = 10
	sparkCommits      = 40
)

// An IndexRepo is one repository's benchmarks.
type IndexRepo struct {
	Repo       string           `json:"repo"`
	Benchmarks []IndexBenchmark `json:"benchmarks"`
}

// An IndexBenchmark is one benchmark: its headline series (total sec/op,
// or the benchmark's only series) with its latest value, last change and
// sparkline, the link to its stacked per-phase view when it has a total
// phase, and all its series.
type IndexBenchmark struct {
	Benchmark string         `json:"benchmark"`
	Headline  *IndexHeadline `json:"headline,omitempty"`
	PhasesURL string         `json:"phases_url,omitempty"`
	Series    []IndexSeries  `json:"series"`
}

// An IndexHeadline is a benchmark's headline series over its newest
// baseline runs (store.HeadlineRuns a repository) on the machine with
// the most of them.
type IndexHeadline struct {
	Phase    string `json:"phase"`
	Unit     string `json:"unit"`
	Machine  string `json:"machine"`
	TrendURL string `json:"trend_url"`
	// Latest is the newest commit's median, LatestCommit that commit.
	Latest       float64 `json:"latest"`
	LatestCommit string  `json:"latest_commit"`
	// Values are the medians of the last sparkCommits commits, oldest
	// first; ChangeAt the indexes among them where a change point is.
	Values   []float64 `json:"values"`
	ChangeAt []int     `json:"change_at"`
	// Change is the last change point among the newest runs, if any.
	Change *IndexChange `json:"change,omitempty"`
	// LatestText is Latest in the series' scaled unit; not in the JSON.
	LatestText string `json:"-"`
}

// An IndexChange is a change point of a headline series.
type IndexChange struct {
	Repo      string       `json:"repo"`
	Key       analysis.Key `json:"key"`
	Commit    string       `json:"commit"`
	FirstRun  time.Time    `json:"first_run"`
	Before    float64      `json:"before"`
	After     float64      `json:"after"`
	ChangePct float64      `json:"change_pct"`
	Direction string       `json:"direction"`
	PValue    float64      `json:"p_value"`
	// ChangeURL is the change point's page.
	ChangeURL string `json:"change_url"`
	// Text says it in a few words ("+25.0% regression"); not in the JSON.
	Text string `json:"-"`
}

// An IndexSeries is one (phase, unit) and its trend page.
type IndexSeries struct {
	Phase    string `json:"phase"`
	Unit     string `json:"unit"`
	TrendURL string `json:"trend_url"`
}

// seriesView is what the front page derives from the runs alone (every
// series, each benchmark's headline trend), kept while the runs stay as
// they are (store.RunsVersion): reading the series and the headlines
// takes a few hundred milliseconds over a million samples, the version
// one query.
type seriesView struct {
	version   store.RunsVersion
	series    []store.Series
	headlines map[headlineKey]*IndexHeadline
}

// seriesView returns the front page's view of the runs, from the cache
// while the runs have not changed. The two reads run at once.
func (d *Dashboard) seriesView(ctx context.Context) (*seriesView, error) {
	version, err := d.cfg.Store.RunsVersion(ctx)
	if err != nil {
		return nil, err
	}
	d.cacheMu.Lock()
	cached := d.cache
	d.cacheMu.Unlock()
	if cached != nil && cached.version == version {
		return cached, nil
	}
	v := &seriesView{version: version}
	var (
		points  []store.HeadlinePoint
		errPts  error
		pending sync.WaitGroup
	)
	pending.Go(func() { points, errPts = d.cfg.Store.RecentHeadlines(ctx, store.HeadlineRuns, defaultUnit) })
	v.series, err = d.cfg.Store.TrendSeries(ctx)
	pending.Wait()
	if err != nil {
		return nil, err
	}
	if errPts != nil {
		return nil, errPts
	}
	v.headlines = headlineTrends(points)
	d.cacheMu.Lock()
	d.cache = v
	d.cacheMu.Unlock()
	return v, nil
}

func (d *Dashboard) index(r *http.Request) (any, error) {
	ctx := r.Context()
	view, err := d.seriesView(ctx)
	if err != nil {
		return nil, err
	}
	series := view.series
	recent, err := d.cfg.Store.RecentComparisons(ctx, recentComparisons)
	if err != nil {
		return nil, err
	}
	data := &IndexData{Repos: []IndexRepo{}, Changes: []IndexChange{}}
	if data.Comparisons, err = d.indexComparisons(ctx, recent); err != nil {
		return nil, err
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
	for i := range data.Repos {
		repo := &data.Repos[i]
		for j := range repo.Benchmarks {
			b := &repo.Benchmarks[j]
			// total first: the benchmark's headline, then its other series.
			slices.SortStableFunc(b.Series, func(x, y IndexSeries) int {
				return cmp.Compare(seriesRank(x), seriesRank(y))
			})
			h, ok := view.headlines[headlineKey{repo.Repo, b.Benchmark}]
			if !ok {
				continue
			}
			b.Headline = h
			if h.Change != nil {
				data.Changes = append(data.Changes, *h.Change)
			}
		}
	}
	slices.SortStableFunc(data.Changes, func(a, b IndexChange) int { return b.FirstRun.Compare(a.FirstRun) })
	if len(data.Changes) > recentChanges {
		data.Changes = data.Changes[:recentChanges]
	}
	return data, nil
}

// seriesRank orders a benchmark's series: total (or the benchmark's only
// phase) in the default unit, the rest of total, then the phases.
func seriesRank(s IndexSeries) int {
	switch {
	case (s.Phase == totalPhase || s.Phase == "") && s.Unit == defaultUnit:
		return 0
	case s.Phase == totalPhase || s.Phase == "":
		return 1
	}
	return 2
}

type headlineKey struct{ repo, benchmark string }

// headlineTrends charts each benchmark's headline series from its newest
// runs, as the trend page would (the machine with the most runs, change
// points found the same way), a few at a time.
func headlineTrends(points []store.HeadlinePoint) map[headlineKey]*IndexHeadline {
	type series struct {
		repo string
		key  analysis.Key
		runs []analysis.TrendRun
	}
	var all []*series
	for _, p := range points {
		if n := len(all); n == 0 || all[n-1].repo != p.Repo || all[n-1].key != p.Key {
			all = append(all, &series{repo: p.Repo, key: p.Key})
		}
		s := all[len(all)-1]
		s.runs = append(s.runs, analysis.TrendRun{Commit: p.Commit, Machine: p.Machine, Started: p.StartedAt, Value: p.Value})
	}
	out := make([]*IndexHeadline, len(all))
	var wg sync.WaitGroup
	sem := make(chan struct{}, max(1, runtime.GOMAXPROCS(0)))
	for i, s := range all {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			t, err := analysis.NewTrend(analysis.TrendInput{Repo: s.repo, Key: s.key, Runs: s.runs}, analysis.TrendOptions{})
			if err != nil || len(t.Commits) == 0 {
				return
			}
			out[i] = newHeadline(t)
		}()
	}
	wg.Wait()
	m := map[headlineKey]*IndexHeadline{}
	for i, s := range all {
		// A benchmark with both a total and a phaseless series (two
		// formats over time) keeps its total.
		if h := out[i]; h != nil && (m[headlineKey{s.repo, s.key.Benchmark}] == nil || s.key.Phase == totalPhase) {
			m[headlineKey{s.repo, s.key.Benchmark}] = h
		}
	}
	return m
}

func newHeadline(t *analysis.Trend) *IndexHeadline {
	last := t.Commits[len(t.Commits)-1]
	factor, label := t.AxisScale()
	h := &IndexHeadline{Phase: t.Phase, Unit: t.Unit, Machine: t.Machine, TrendURL: trendURL(t.Repo, t.Key, ""),
		Latest: last.Median, LatestCommit: last.Commit, LatestText: number(last.Median/factor) + " " + label, Values: []float64{}, ChangeAt: []int{}}
	from := max(0, len(t.Commits)-sparkCommits)
	for _, c := range t.Commits[from:] {
		h.Values = append(h.Values, c.Median)
	}
	for _, c := range t.ChangePoints {
		if c.Index >= from {
			h.ChangeAt = append(h.ChangeAt, c.Index-from)
		}
	}
	if n := len(t.ChangePoints); n > 0 {
		c := t.ChangePoints[n-1]
		h.Change = &IndexChange{Repo: t.Repo, Key: t.Key, Commit: c.Commit, FirstRun: t.Commits[c.Index].FirstRun,
			Before: c.Before, After: c.After, ChangePct: c.ChangePct, Direction: c.Direction, PValue: c.PValue,
			ChangeURL: changeURL(t.Repo, t.Key, c.Commit, t.Machine), Text: pct(c.ChangePct) + " " + c.Direction}
	}
	return h
}

const (
	totalPhase   = "total"
	defaultUnit  = "sec/op"
	defaultSince = "90d"
)

// TrendData is the trend page's data: the trend as perfbot trend --format
// json writes it, what the store knows of each commit, and links for
// each commit.
type TrendData struct {
	Trend *analysis.Trend `json:"trend"`
	Since string          `json:"since"`
	// Links has one entry per Trend.Commits, in its order.
	Links     []CommitLinks `json:"links"`
	PhasesURL string        `json:"phases_url,omitempty"`
	// Units are the units the series is stored in, for the unit control.
	Units []string `json:"units"`
	// Rows are the table's formatted values; not in the JSON.
	Rows []trendRow `json:"-"`
	// Chart is the interactive chart's data (trend.js); not in the JSON.
	Chart template.JS `json:"-"`
	// Query is the page's query string, for its JSON and image links.
	Query template.URL `json:"-"`
	// Scale is the unit the chart and table show values in.
	Scale string `json:"-"`
	// SinceChoices are the window control's options.
	SinceChoices []string `json:"-"`
}

// CommitLinks are where a commit of a trend links to: its page in the
// dashboard (what the store knows of it, the comparisons that include
// it), the comparison with the commit before it in the trend, for a
// change point the change's page, and the commit on GitHub when the
// repository is there.
type CommitLinks struct {
	Commit     string `json:"commit"`
	PageURL    string `json:"page_url"`
	CompareURL string `json:"compare_url,omitempty"`
	ChangeURL  string `json:"change_url,omitempty"`
	CommitURL  string `json:"commit_url,omitempty"`
}

type trendRow struct {
	analysis.TrendCommit
	Links                                 CommitLinks
	Short, Date, Median, Interval, Change string
}

// trendPoint is one commit of the interactive chart, in the page's scale.
type trendPoint struct {
	Short   string   `json:"short"`
	Subject string   `json:"subject,omitempty"`
	Date    string   `json:"date,omitempty"`
	Median  float64  `json:"median"`
	Lo      *float64 `json:"lo"`
	Hi      *float64 `json:"hi"`
	Runs    int      `json:"runs"`
	Change  string   `json:"change,omitempty"`
	URL     string   `json:"url"`
}

// sinceChoices are the window control's usual options.
var sinceChoices = []string{"30d", "90d", "180d", "365d", "all"}

func (d *Dashboard) trend(r *http.Request) (any, error) {
	q := r.URL.Query()
	t, sinceText, err := d.requestTrend(r)
	if err != nil {
		return nil, err
	}
	repo, key := t.Repo, t.Key
	if err := d.addSubjects(r, t); err != nil {
		return nil, err
	}
	units, err := d.seriesUnits(r, repo, key)
	if err != nil {
		return nil, err
	}
	factor, label := t.AxisScale()
	data := &TrendData{Trend: t, Since: sinceText, Links: make([]CommitLinks, len(t.Commits)), Units: units,
		Query: template.URL(q.Encode()), Scale: label, SinceChoices: sinceChoices}
	if !slices.Contains(data.SinceChoices, sinceText) {
		data.SinceChoices = append([]string{sinceText}, sinceChoices...)
	}
	changes := map[int]analysis.TrendChange{}
	for _, c := range t.ChangePoints {
		changes[c.Index] = c
	}
	points := make([]trendPoint, len(t.Commits))
	for i, c := range t.Commits {
		l := CommitLinks{Commit: c.Commit, PageURL: commitPageURL(repo, c.Commit), CommitURL: commitURL(repo, c.Commit)}
		if i > 0 {
			l.CompareURL = compareURL(repo, t.Commits[i-1].Commit, c.Commit)
		}
		row := trendRow{TrendCommit: c, Short: short(c.Commit), Median: number(c.Median / factor), Date: c.FirstRun.UTC().Format("2006-01-02 15:04")}
		p := trendPoint{Short: short(c.Commit), Subject: c.Subject, Date: row.Date, Median: c.Median / factor, Runs: c.Runs, URL: l.PageURL}
		if !math.IsInf(c.Lo, 0) && !math.IsInf(c.Hi, 0) {
			row.Interval = number(c.Lo/factor) + " – " + number(c.Hi/factor)
			lo, hi := c.Lo/factor, c.Hi/factor
			p.Lo, p.Hi = &lo, &hi
		}
		if ch, ok := changes[i]; ok {
			l.ChangeURL = changeURL(repo, key, c.Commit, t.Machine)
			row.Change = fmt.Sprintf("%s %s (p=%.3g)", pct(ch.ChangePct), ch.Direction, ch.PValue)
			p.Change, p.URL = pct(ch.ChangePct)+" "+ch.Direction, l.ChangeURL
		}
		row.Links = l
		data.Links[i] = l
		data.Rows = append(data.Rows, row)
		points[i] = p
	}
	chart, err := json.Marshal(map[string]any{"unit": label, "title": t.Key.String(), "points": points})
	if err != nil {
		return nil, err
	}
	data.Chart = template.JS(chart)
	if key.Phase == totalPhase {
		data.PhasesURL = phasesURL(repo, key.Benchmark, key.Unit)
	}
	return data, nil
}

// addSubjects fills in the trend's commit subjects from the store.
func (d *Dashboard) addSubjects(r *http.Request, t *analysis.Trend) error {
	shas := make([]string, len(t.Commits))
	for i, c := range t.Commits {
		shas[i] = c.Commit
	}
	known, err := d.cfg.Store.Commits(r.Context(), t.Repo, shas)
	if err != nil {
		return err
	}
	for i := range t.Commits {
		if c, ok := known[t.Commits[i].Commit]; ok && t.Commits[i].Subject == "" {
			t.Commits[i].Subject = c.Subject
		}
	}
	return nil
}

// seriesUnits lists the units a series (repository, benchmark, phase) is
// stored in.
func (d *Dashboard) seriesUnits(r *http.Request, repo string, key analysis.Key) ([]string, error) {
	view, err := d.seriesView(r.Context())
	if err != nil {
		return nil, err
	}
	series := view.series
	units := []string{}
	for _, s := range series {
		if s.Repo == repo && s.Benchmark == key.Benchmark && s.Phase == key.Phase {
			units = append(units, s.Unit)
		}
	}
	if !slices.Contains(units, key.Unit) {
		units = append(units, key.Unit)
	}
	return units, nil
}

// requestTrend reads the series, window and machine of a trend request
// (repo, benchmark, phase, unit, since, machine) and charts it; it
// returns the trend and the window as given.
func (d *Dashboard) requestTrend(r *http.Request) (*analysis.Trend, string, error) {
	q := r.URL.Query()
	repo, key, err := seriesParams(q, true)
	if err != nil {
		return nil, "", err
	}
	sinceText := cmp.Or(q.Get("since"), defaultSince)
	since, err := parseSince(sinceText, d.cfg.Now())
	if err != nil {
		return nil, "", err
	}
	t, err := d.loadTrend(r, repo, key, since, sinceText, q.Get("machine"))
	return t, sinceText, err
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
		return nil, d.noSeries(r, repo, key, since, sinceText)
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

// noSeries is the 404 of a series without runs in the window: it names
// what is stored instead (the repositories, the repository's benchmarks,
// or the benchmark's phases and units), or says to widen the window.
func (d *Dashboard) noSeries(r *http.Request, repo string, key analysis.Key, since time.Time, sinceText string) error {
	view, err := d.seriesView(r.Context())
	if err != nil {
		return err
	}
	series := view.series
	var repos, benches, phases []string
	for _, s := range series {
		repos = append(repos, s.Repo)
		if s.Repo == repo {
			benches = append(benches, s.Benchmark)
			if s.Benchmark == key.Benchmark {
				phases = append(phases, cmp.Or(s.Phase, "(none)")+" "+s.Unit)
			}
		}
	}
	switch {
	case len(series) == 0:
		return notFound("no baseline runs are stored yet: pushes to the default branch of a served repository record them (or perfbot run)")
	case len(benches) == 0:
		return notFound("repository %s has no baseline runs; stored: %s (the index, /, lists their series)", repo, listSome(repos))
	case len(phases) == 0:
		return notFound("%s has no benchmark %s with baseline runs; its benchmarks: %s (the index, /, links their series)", repo, key.Benchmark, listSome(benches))
	case !slices.Contains(phases, cmp.Or(key.Phase, "(none)")+" "+key.Unit):
		return notFound("%s in %s has no series phase=%s unit=%s; its phases and units: %s (pick a series that has data from the index, /)",
			key.Benchmark, repo, key.Phase, key.Unit, listSome(phases))
	}
	return notFound("no baseline runs of %s in %s since %s (since=%s): widen the window with since=all", key, repo, since.UTC().Format(time.DateOnly), sinceText)
}

// listSome lists the distinct names, at most 8 of them.
func listSome(names []string) string {
	names = slices.Compact(slices.Sorted(slices.Values(names)))
	if len(names) > 8 {
		return strings.Join(names[:8], ", ") + fmt.Sprintf(" and %d more", len(names)-8)
	}
	return strings.Join(names, ", ")
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
	view, err := d.seriesView(r.Context())
	if err != nil {
		return nil, err
	}
	series := view.series
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
			CommitLinks: CommitLinks{Commit: c.Commit, PageURL: commitPageURL(repo, c.Commit), CommitURL: commitURL(repo, c.Commit)}}
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
	var changeAt []int
	for _, c := range total.ChangePoints {
		changeAt = append(changeAt, c.Index)
		data.Commits[c.Index].ChangeURL = changeURL(repo, key, c.Commit, total.Machine)
	}
	if data.Chart, err = stackedSVG(data, factor, label, changeAt); err != nil {
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

// CompareData is the compare page's data: a stored comparison of head
// against base (the newest, or the one id names) when there is one, or
// else a comparison of the stored runs of the two commits made now
// (nothing is measured).
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
	// AA is true when base and head are one commit measured with the
	// same arguments: whatever the comparison reports is noise. One
	// commit with different arguments (Report.BaseArgs, HeadArgs) is an
	// A/B of the arguments.
	AA bool `json:"aa"`
	// PR is the stored comparison's pull request (0: none); PullURL it
	// on GitHub.
	PR      int    `json:"pr,omitempty"`
	PullURL string `json:"pull_url,omitempty"`
	// Comparisons are every stored comparison of the pair, newest first.
	Comparisons []IndexComparison `json:"comparisons"`
	// Bisect says how to find the commit behind each regressed phase.
	Bisect []BisectHint `json:"bisect"`
	// View is the report worded as the PR comment, in HTML; not in the
	// JSON (Report is).
	View *render.View `json:"-"`
	// Query is the JSON link's query string: id=N for a stored
	// comparison, the repository and both full SHAs for one compared
	// from the runs.
	Query template.URL `json:"-"`
}

// A BisectHint is how to bisect a regressed series between base and
// head: the command and the pull-request comment that do it (Comment ""
// where the comment's bisection would measure another series: it takes
// a phase only, in sec/op).
type BisectHint struct {
	Benchmark string `json:"benchmark"`
	Phase     string `json:"phase"`
	Unit      string `json:"unit"`
	Command   string `json:"command"`
	Comment   string `json:"comment,omitempty"`
}

// htmlFormatter words a report's pieces for a page: everything escaped,
// names as code.
var htmlFormatter = render.Formatter{
	Strong: func(s string) string { return "<b>" + html.EscapeString(s) + "</b>" },
	Code:   func(s string) string { return "<code>" + html.EscapeString(s) + "</code>" },
	Text:   html.EscapeString,
}

var shaRE = regexp.MustCompile(`^[0-9a-f]{4,64}$`)

func (d *Dashboard) compare(r *http.Request) (any, error) {
	q := r.URL.Query()
	ctx := r.Context()
	var stored *store.Comparison
	if idText := q.Get("id"); idText != "" {
		id, err := strconv.ParseInt(idText, 10, 64)
		if err != nil || id <= 0 {
			return nil, badRequest("id=%s: want a stored comparison's number, as the index (/) lists them", idText)
		}
		stored, err = d.cfg.Store.Comparison(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			return nil, notFound("no stored comparison #%d: the index (/) lists the newest, and each compare page every comparison of its pair", id)
		}
		if err != nil {
			return nil, err
		}
		q = url.Values{"repo": {stored.Repo}, "base": {stored.BaseSHA}, "head": {stored.HeadSHA}}
	}
	repo, base, head := q.Get("repo"), strings.ToLower(q.Get("base")), strings.ToLower(q.Get("head"))
	switch {
	case repo == "":
		return nil, badRequest("repo is required: the repository as the index (/) lists it (or id=N, a stored comparison's number)")
	case base == "" || head == "":
		return nil, badRequest("base and head are required: two commit SHAs, e.g. ?repo=R&base=SHA1&head=SHA2 (a unique beginning of 4 or more digits will do); a trend page links each commit to its comparison with the one before")
	case !shaRE.MatchString(base) || !shaRE.MatchString(head):
		return nil, badRequest("base=%s head=%s: want hexadecimal commit SHAs (or a unique beginning of 4 or more digits), as the trend pages show them; "+
			"branch and tag names are not stored, so resolve one with git rev-parse", base, head)
	}
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
	data := &CompareData{Repo: repo, Base: base, Head: head, BaseURL: commitURL(repo, base), HeadURL: commitURL(repo, head),
		AA: base == head, Comparisons: []IndexComparison{}, Bisect: []BisectHint{}}
	pair, err := d.cfg.Store.PairComparisons(ctx, repo, base, head)
	if err != nil {
		return nil, err
	}
	if data.Comparisons, err = d.indexComparisons(ctx, pair); err != nil {
		return nil, err
	}
	if stored == nil && len(pair) > 0 {
		if stored, err = d.cfg.Store.Comparison(ctx, pair[0].ID); err != nil {
			return nil, err
		}
	}
	if stored != nil && stored.Report != "" {
		var rep analysis.Report
		if err := json.Unmarshal([]byte(stored.Report), &rep); err != nil {
			return nil, fmt.Errorf("comparison %d: decode report: %w", stored.ID, err)
		}
		data.Source, data.ComparisonID, data.CreatedAt, data.Report = "stored", stored.ID, stored.CreatedAt, &rep
		data.PR, data.PullURL = stored.PR, pullURL(repo, stored.PR)
		// The JSON link names the comparison shown: the pair's newest
		// may be another by the time it is followed.
		data.Query = template.URL("id=" + strconv.FormatInt(stored.ID, 10))
	} else {
		rep, err := d.compareRuns(r, repo, base, head)
		if err != nil {
			return nil, err
		}
		data.Source, data.Report = "runs", rep
		data.Query = template.URL(url.Values{"repo": {repo}, "base": {base}, "head": {head}}.Encode())
	}
	data.Summary = render.Headline(data.Report)
	shown := data.Report
	if !slices.ContainsFunc(shown.Phases, func(r analysis.Row) bool { return r.Primary }) {
		// A report stored by an older perfbot marks no row primary: every
		// row is shown as one the verdict rests on.
		legacy := *shown
		legacy.Phases = slices.Clone(shown.Phases)
		for i := range legacy.Phases {
			legacy.Phases[i].Primary = true
		}
		shown = &legacy
	}
	data.View = render.NewView(shown, htmlFormatter)
	// One commit is an A/A only under the same arguments: with
	// --base-args or --head-args it is an A/B of the arguments, whose
	// verdict is no noise.
	data.AA = isAA(base, head, data.Report.BaseArgs, data.Report.HeadArgs)
	if base != head {
		// Bisecting needs two commits; an A/B of arguments at one
		// commit has nothing to bisect.
		data.Bisect = bisectHints(repo, base, head, shown)
	}
	return data, nil
}

// bisectHints are how to bisect each benchmark's regressed primary
// phases of rep, or its total when no phase of it regressed (a phase
// names the cause), in the order of rep's rows.
func bisectHints(repo, base, head string, rep *analysis.Report) []BisectHint {
	var keys, totals []analysis.Key
	for _, row := range rep.Phases {
		switch {
		case !row.Primary || row.Verdict != analysis.VerdictRegression || strings.Contains(row.Phase, "/"):
		case row.Phase == totalPhase:
			totals = append(totals, row.Key)
		case !slices.Contains(keys, row.Key):
			keys = append(keys, row.Key)
		}
	}
	for _, t := range totals {
		if !slices.ContainsFunc(keys, func(k analysis.Key) bool { return k.Benchmark == t.Benchmark && k.Unit == t.Unit }) {
			keys = append(keys, t)
		}
	}
	hints := []BisectHint{}
	for _, k := range keys {
		hints = append(hints, bisectHint(repo, base, head, k, rep.ConfigPath))
	}
	return hints
}

// bisectHint is how to bisect key's series between good and bad: perfbot
// bisect on the runner, as it runs when pasted (--repo when the
// repository is a path or URL it can clone, the series' benchmark as
// its runs name it, --unit when it is not sec/op, --config when the
// config came from a file outside the repository, configPath), or the
// comment that asks perfbot serve to. The comment names a phase only,
// and bisects sec/op: a series in another unit gets no comment.
func bisectHint(repo, good, bad string, key analysis.Key, configPath string) BisectHint {
	cmd := "perfbot bisect"
	if !ownerNameRE.MatchString(repo) {
		cmd += " --repo " + shellQuote(repo)
	}
	cmd += " --good " + short12(good) + " --bad " + short12(bad)
	if key.Benchmark != "" {
		cmd += " --benchmark " + shellQuote(key.Benchmark)
	}
	if key.Phase != "" {
		cmd += " --phase " + shellQuote(key.Phase)
	}
	if key.Unit != "" && key.Unit != defaultUnit {
		cmd += " --unit " + shellQuote(key.Unit)
	}
	if configPath != "" {
		cmd += " --config " + shellQuote(configPath)
	}
	h := BisectHint{Benchmark: key.Benchmark, Phase: key.Phase, Unit: cmp.Or(key.Unit, defaultUnit), Command: cmd}
	if h.Unit == defaultUnit {
		h.Comment = "/perfbot bisect " + short12(good) + " " + short12(bad)
		if key.Phase != "" {
			h.Comment += " phase=" + key.Phase
		}
	}
	return h
}

// shellQuote quotes s for a POSIX shell when it holds anything but
// plain characters.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:@+,") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

func short12(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

func indexComparison(c store.Comparison) IndexComparison {
	ic := IndexComparison{ID: c.ID, Repo: c.Repo, PR: c.PR, Base: c.BaseSHA, Head: c.HeadSHA, Verdict: c.Verdict, CreatedAt: c.CreatedAt,
		CompareURL: comparisonURL(c.ID)}
	ic.PullURL = pullURL(c.Repo, c.PR)
	ic.AA = isAA(c.BaseSHA, c.HeadSHA, nil, nil)
	return ic
}

// indexComparisons lists stored comparisons (read without their
// reports). A comparison of one commit with itself is read whole, for
// the arguments its report names: with different ones it is an A/B of
// the arguments, not an A/A.
func (d *Dashboard) indexComparisons(ctx context.Context, cs []store.Comparison) ([]IndexComparison, error) {
	out := make([]IndexComparison, 0, len(cs))
	for _, c := range cs {
		ic := indexComparison(c)
		if c.BaseSHA == c.HeadSHA {
			full, err := d.cfg.Store.Comparison(ctx, c.ID)
			if err != nil {
				return nil, err
			}
			if ic.BaseArgs, ic.HeadArgs, err = comparisonArgs(full); err != nil {
				return nil, err
			}
			ic.AA = isAA(c.BaseSHA, c.HeadSHA, ic.BaseArgs, ic.HeadArgs)
		}
		out = append(out, ic)
	}
	return out, nil
}

// comparisonArgs returns the sides' variant arguments of a stored
// comparison: its report's, else its inputs' (perfbot compare stores
// both); none when neither names any.
func comparisonArgs(c *store.Comparison) (base, head []string, err error) {
	var args struct {
		BaseArgs []string `json:"base_args"`
		HeadArgs []string `json:"head_args"`
	}
	for _, doc := range []string{c.Report, c.Inputs} {
		if doc == "" {
			continue
		}
		if err := json.Unmarshal([]byte(doc), &args); err != nil {
			return nil, nil, fmt.Errorf("comparison %d: decode its arguments: %w", c.ID, err)
		}
		if len(args.BaseArgs) > 0 || len(args.HeadArgs) > 0 {
			return args.BaseArgs, args.HeadArgs, nil
		}
	}
	return nil, nil, nil
}

// pullURL is pull request pr of repo on GitHub, or "" for none or a
// repository elsewhere.
func pullURL(repo string, pr int) string {
	if pr <= 0 || !ownerNameRE.MatchString(repo) {
		return ""
	}
	return fmt.Sprintf("https://github.com/%s/pull/%d", repo, pr)
}

// compareRuns compares the stored runs of head against those of base, as
// perfbot compare would: each side's runs of its newest run's config,
// judged with the thresholds of the head's, with the baseline history of
// the head's machine and config for noise floors.
func (d *Dashboard) compareRuns(r *http.Request, repo, base, head string) (*analysis.Report, error) {
	ctx := r.Context()
	side := func(sha string) ([]store.RunRecord, analysis.Options, RunsConfig, error) {
		runs, err := d.cfg.Store.Runs(ctx, store.RunQuery{Repo: repo, Commits: []string{sha}})
		if err != nil {
			return nil, analysis.Options{}, RunsConfig{}, err
		}
		if len(runs) == 0 {
			return nil, analysis.Options{}, RunsConfig{}, notFound("no stored runs of commit %s in %s and no stored comparison: pick commits with runs "+
				"(a trend page links each commit to its comparison with the one before), or measure it with perfbot run", sha, repo)
		}
		return runsOfNewestConfig(runs)
	}
	baseRuns, _, baseConfig, err := side(base)
	if err != nil {
		return nil, err
	}
	headRuns, opts, headConfig, err := side(head)
	if err != nil {
		return nil, err
	}
	last := headRuns[len(headRuns)-1]
	hist, err := d.cfg.Store.History(ctx, store.HistoryQuery{Repo: repo, Machine: last.Machine, ConfigHash: headConfig.Hash, Limit: 100})
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
	rep := analysis.Compare(in, opts)
	rep.Warnings = append(rep.Warnings, "compared now from the stored runs, judged with "+headConfig.Text())
	if baseConfig.LeftOut > 0 && base != head {
		rep.Warnings = append(rep.Warnings, "of base's runs, "+baseConfig.leftOut()+": only those of its newest run's config are compared")
	}
	if baseConfig.Hash != headConfig.Hash {
		rep.Warnings = append(rep.Warnings, fmt.Sprintf("base's runs are of config %s and head's of %s: differences may be the configs'",
			short12(baseConfig.Hash), short12(headConfig.Hash)))
	}
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
	// Available is false when there is no job queue (SQLite).
	Available bool      `json:"available"`
	Note      string    `json:"note,omitempty"`
	Queued    []JobView `json:"queued"`
	Running   []JobView `json:"running"`
	Finished  []JobView `json:"finished"`
	// Queues are the queues with jobs; Warnings name those whose jobs
	// wait while no worker starts any.
	Queues   []queue.QueueStatus `json:"queues"`
	Warnings []string            `json:"warnings"`
}

// A JobView is a job with what its page shows: its age, how long it ran,
// what it is about and links to it.
type JobView struct {
	queue.Job
	// Subject says what the job is about: "o/r#12 head 1a2b3c4 against
	// 5d6e7f8".
	Subject string `json:"subject"`
	// PullURL is the pull request on GitHub; CommitURL the head's (or the
	// baseline commit's) page; CompareURL the comparison's page.
	PullURL    string `json:"pull_url,omitempty"`
	CommitURL  string `json:"commit_url,omitempty"`
	CompareURL string `json:"compare_url,omitempty"`
	// Age is how long ago the job was created; Duration how long its
	// last attempt ran (so far, while running); "" when it has not run.
	Age      string `json:"age"`
	Duration string `json:"duration,omitempty"`
}

// jobsLimit is how many of the newest jobs the page lists.
const jobsLimit = 200

// defaultJobTimeout is how long a job may take when the server's config
// does not say (perfbot serve's job_timeout default).
const defaultJobTimeout = 2 * time.Hour

func (d *Dashboard) jobs(r *http.Request) (any, error) {
	data := &JobsData{Queued: []JobView{}, Running: []JobView{}, Finished: []JobView{}, Queues: []queue.QueueStatus{}, Warnings: []string{}}
	if d.cfg.Jobs == nil {
		data.Note = "this store has no job queue: the queue lives in PostgreSQL, where perfbot serve and perfbot worker share it (--db postgres://…)"
		return data, nil
	}
	jobs, err := d.cfg.Jobs(r.Context(), jobsLimit)
	if err != nil {
		return nil, err
	}
	data.Available = true
	now := d.cfg.Now()
	for _, j := range jobs {
		v := jobView(j, now)
		switch j.State {
		case "running":
			data.Running = append(data.Running, v)
		case "completed", "cancelled", "discarded":
			data.Finished = append(data.Finished, v)
		default: // available, scheduled, pending, retryable
			data.Queued = append(data.Queued, v)
		}
	}
	if d.cfg.Queues != nil {
		if data.Queues, err = d.cfg.Queues(r.Context()); err != nil {
			return nil, err
		}
		timeout := cmp.Or(d.cfg.JobTimeout, defaultJobTimeout)
		for _, q := range data.Queues {
			if q.Available == 0 || q.OldestAvailable == nil || now.Sub(*q.OldestAvailable) < timeout ||
				(q.LastAttempt != nil && now.Sub(*q.LastAttempt) < timeout) {
				continue
			}
			last := "no worker has ever started one of its jobs"
			if q.LastAttempt != nil {
				last = "no worker has started one of its jobs for " + age(now.Sub(*q.LastAttempt))
			}
			wait := plural(q.Available, "job") + " wait"
			if q.Available == 1 {
				wait += "s"
			}
			data.Warnings = append(data.Warnings, fmt.Sprintf("queue %s: %s, the oldest for %s, and %s (longer than a job may take, %s): "+
				"is a perfbot worker serving it (perfbot worker --queue %s)?", q.Queue, wait, age(now.Sub(*q.OldestAvailable)), last, age(timeout), q.Queue))
		}
	}
	return data, nil
}

// jobView describes a job for the page from its arguments.
func jobView(j queue.Job, now time.Time) JobView {
	v := JobView{Job: j, Age: age(now.Sub(j.CreatedAt))}
	if j.AttemptedAt != nil {
		end := now
		if j.FinalizedAt != nil {
			end = *j.FinalizedAt
		}
		v.Duration = age(end.Sub(*j.AttemptedAt))
	}
	var a struct {
		Repo    string `json:"repo"`
		PR      int    `json:"pr"`
		HeadSHA string `json:"head_sha"`
		BaseSHA string `json:"base_sha"`
		SHA     string `json:"sha"`
		Good    string `json:"good"`
		Bad     string `json:"bad"`
		Phase   string `json:"phase"`
		Comment string `json:"comment"`
	}
	if json.Unmarshal([]byte(j.Args), &a) != nil || a.Repo == "" {
		return v
	}
	pr := ""
	if a.PR > 0 {
		pr = fmt.Sprintf("#%d", a.PR)
		v.PullURL = pullURL(a.Repo, a.PR)
	}
	switch {
	case a.HeadSHA != "" && a.BaseSHA != "":
		v.Subject = fmt.Sprintf("%s%s head %s against %s", a.Repo, pr, short(a.HeadSHA), short(a.BaseSHA))
		v.CommitURL, v.CompareURL = commitPageURL(a.Repo, a.HeadSHA), compareURL(a.Repo, a.BaseSHA, a.HeadSHA)
	case a.SHA != "":
		v.Subject = fmt.Sprintf("%s baseline of %s", a.Repo, short(a.SHA))
		v.CommitURL = commitPageURL(a.Repo, a.SHA)
	case a.Good != "" && a.Bad != "":
		v.Subject = fmt.Sprintf("%s%s bisect %s..%s", a.Repo, pr, short(a.Good), short(a.Bad))
		if a.Phase != "" {
			v.Subject += " phase " + a.Phase
		}
		v.CompareURL = compareURL(a.Repo, a.Good, a.Bad)
	default:
		v.Subject = a.Repo + pr
	}
	return v
}

// age says a duration as people read one: "45s", "12m", "3h 5m", "2d 4h".
func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm", int(d.Minutes()))
	case d < 24*time.Hour:
		return fmt.Sprintf("%dh %dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd %dh", int(d.Hours())/24, int(d.Hours())%24)
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

// changeURL is a change point's page: the trend's segments before and
// after it compared, and how to bisect it.
func changeURL(repo string, key analysis.Key, commit, machine string) string {
	v := url.Values{"repo": {repo}, "benchmark": {key.Benchmark}, "phase": {key.Phase}, "unit": {key.Unit}, "at": {commit}, "since": {"all"}}
	if machine != "" {
		v.Set("machine", machine)
	}
	return "/change?" + v.Encode()
}

// commitPageURL is a commit's page in the dashboard.
func commitPageURL(repo, sha string) string {
	return "/commit?" + url.Values{"repo": {repo}, "sha": {sha}}.Encode()
}

// comparisonURL is a stored comparison's page.
func comparisonURL(id int64) string { return "/compare?id=" + strconv.FormatInt(id, 10) }

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

// seriesName is a key's benchmark and phase, as benchfmt names them.
func seriesName(k analysis.Key) string {
	if k.Phase == "" {
		return k.Benchmark
	}
	return k.Benchmark + "/phase=" + k.Phase
}

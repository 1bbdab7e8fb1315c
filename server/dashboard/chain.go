package dashboard

import (
	"cmp"
	"errors"
	"html"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/store"
)

// The link chain a slowdown is chased along: a trend's point opens its
// commit's page (what the store knows of it and the comparisons that
// include it), a change point opens its change page (the segment before
// it compared with the segment after it, and how to bisect it), and
// every comparison links back to its commits.

// segmentCommits is how many commits of each segment next to a change
// point the change page compares: the nearest ones, so that a slow drift
// far from the change does not blur it.
const segmentCommits = 10

// ChangeData is a change point's page: the trend's segments on both
// sides of it compared as perfbot compare would compare two commits, and
// the bisect commands between the last commit before it and its commit.
type ChangeData struct {
	Repo    string       `json:"repo"`
	Key     analysis.Key `json:"key"`
	Machine string       `json:"machine"`
	Since   string       `json:"since"`
	// Change is the trend's change point.
	Change analysis.TrendChange `json:"change"`
	// Good is the last commit before the change, Bad its first (the
	// change point's commit); Before and After the commits of each
	// segment that were compared, oldest first.
	Good   string   `json:"good"`
	Bad    string   `json:"bad"`
	Before []string `json:"before"`
	After  []string `json:"after"`
	// Report compares the runs of After against those of Before.
	Report   *analysis.Report `json:"report"`
	Summary  string           `json:"summary"`
	Bisect   []BisectHint     `json:"bisect"`
	TrendURL string           `json:"trend_url"`
	// CompareURL compares Bad with Good alone.
	CompareURL string `json:"compare_url"`
	// GoodSubject and BadSubject are the two commits' subjects, where
	// stored.
	GoodSubject string `json:"good_subject,omitempty"`
	BadSubject  string `json:"bad_subject,omitempty"`
	// Config is the config whose runs were compared, with its
	// thresholds, and the runs of others left out.
	Config RunsConfig `json:"config"`
	// Size is the change's one size, which the page quotes wherever it
	// gives one.
	Size ChangeSize `json:"size"`
	// View is Report worded as the PR comment, in HTML; not in the JSON.
	View *render.View `json:"-"`
}

// A ChangeSize is how large a change point's change is: the series' row
// of the segments' comparison (its Hodges–Lehmann shift, the estimate its
// verdict weighed, with the interval the verdict was decided on, as the
// row's Δ cell prints them), or, where the segments' runs give none (too
// few, a base of 0), the trend's change of medians.
type ChangeSize struct {
	// Source is "segments" (Report's row) or "trend" (Change's medians).
	Source string `json:"source"`
	// Pct is the change in percent (null for a trend's change from a
	// median of 0); LoPct and HiPct its interval, absent without one.
	Pct   *float64 `json:"pct"`
	LoPct *float64 `json:"lo_pct,omitempty"`
	HiPct *float64 `json:"hi_pct,omitempty"`
	// Verdict is the row's verdict, or the trend's direction.
	Verdict string `json:"verdict"`
	// Delta ("+20.0% [+19.4, +20.6]"), Values ("1.352s → 1.432s") and
	// VerdictText are the row's cells as the table shows them; not in
	// the JSON.
	Delta, Values, VerdictText template.HTML `json:"-"`
}

// changeSize is key's change as the segments' comparison has it, or the
// trend's change point's where the comparison has no estimate of it.
func changeSize(rep *analysis.Report, v *render.View, key analysis.Key, ch analysis.TrendChange) ChangeSize {
	i := slices.IndexFunc(rep.Phases, func(r analysis.Row) bool { return r.Key == key })
	if i >= 0 && finite(rep.Phases[i].Change()) {
		row := rep.Phases[i]
		for _, t := range slices.Concat(v.Tables, v.Others) {
			j := slices.IndexFunc(t.Rows, func(r render.ViewRow) bool { return r.Key == key })
			if j < 0 {
				continue
			}
			vr := t.Rows[j]
			p := row.Change()
			s := ChangeSize{Source: "segments", Pct: &p, Verdict: string(row.Verdict),
				Delta: template.HTML(vr.Delta), Values: template.HTML(vr.Base + " → " + vr.Head), VerdictText: template.HTML(vr.VerdictText)}
			if lo, hi := vr.Lo, vr.Hi; finite(lo) && finite(hi) {
				s.LoPct, s.HiPct = &lo, &hi
			}
			return s
		}
	}
	s := ChangeSize{Source: "trend", Verdict: ch.Direction,
		Delta: template.HTML(html.EscapeString(pct(ch.ChangePct))), Values: template.HTML(html.EscapeString(scaledPair(ch.Before, ch.After, key.Unit))),
		VerdictText: template.HTML(html.EscapeString(ch.Direction))}
	if p := ch.ChangePct; finite(p) {
		s.Pct = &p
	}
	return s
}

func (d *Dashboard) change(r *http.Request) (any, error) {
	at := strings.ToLower(r.URL.Query().Get("at"))
	if !shaRE.MatchString(at) {
		return nil, badRequest("at=%s: want the change point's commit SHA (or a unique beginning of 4 or more digits), as the trend page links it", at)
	}
	t, sinceText, err := d.requestTrend(r)
	if err != nil {
		return nil, err
	}
	repo, key := t.Repo, t.Key
	idx := slices.IndexFunc(t.ChangePoints, func(c analysis.TrendChange) bool { return strings.HasPrefix(c.Commit, at) })
	if idx < 0 {
		var found []string
		for _, c := range t.ChangePoints {
			found = append(found, short(c.Commit))
		}
		list := "none"
		if len(found) > 0 {
			list = strings.Join(found, ", ")
		}
		return nil, notFound("%s is not a change point of %s on %s since %s (its change points: %s): the trend page (/trend) marks them and links each here",
			at, key, t.Machine, sinceText, list)
	}
	ch := t.ChangePoints[idx]
	lo, hi := 0, len(t.Commits)
	if idx > 0 {
		lo = t.ChangePoints[idx-1].Index
	}
	if idx+1 < len(t.ChangePoints) {
		hi = t.ChangePoints[idx+1].Index
	}
	lo, hi = max(lo, ch.Index-segmentCommits), min(hi, ch.Index+segmentCommits)
	data := &ChangeData{Repo: repo, Key: key, Machine: t.Machine, Since: sinceText, Change: ch,
		Good: t.Commits[ch.Index-1].Commit, Bad: ch.Commit, TrendURL: trendURL(repo, key, sinceText)}
	for _, c := range t.Commits[lo:ch.Index] {
		data.Before = append(data.Before, c.Commit)
	}
	for _, c := range t.Commits[ch.Index:hi] {
		data.After = append(data.After, c.Commit)
	}
	data.CompareURL = compareURL(repo, data.Good, data.Bad)
	known, err := d.cfg.Store.Commits(r.Context(), repo, []string{data.Good, data.Bad})
	if err != nil {
		return nil, err
	}
	data.GoodSubject, data.BadSubject = known[data.Good].Subject, known[data.Bad].Subject

	// Each side's runs stand for its segment: they are labelled with the
	// side's commit, as one side of a comparison is one revision. Only
	// the runs of one config are compared, the newest runs', with its
	// thresholds.
	runs, err := d.cfg.Store.Runs(r.Context(), store.RunQuery{Repo: repo, Commits: append(slices.Clone(data.Before), data.After...),
		Kind: store.KindBaseline, Machine: t.Machine})
	if err != nil {
		return nil, err
	}
	runs, opts, rc, err := runsOfNewestConfig(runs)
	if err != nil {
		return nil, err
	}
	data.Config = rc
	var base, head []analysis.Run
	before := map[string]bool{}
	for _, c := range data.Before {
		before[c] = true
	}
	for i := range runs {
		run := runs[i].Run()
		if before[run.Revision] {
			run.Revision = data.Good
			base = append(base, run)
		} else {
			run.Revision = data.Bad
			head = append(head, run)
		}
	}
	// Noise floors from the machine's baseline history of that config,
	// as perfbot compare takes them.
	hist, err := d.cfg.Store.History(r.Context(), store.HistoryQuery{Repo: repo, Machine: t.Machine, ConfigHash: rc.Hash, Limit: 100})
	if err != nil {
		return nil, err
	}
	data.Report = analysis.Compare(analysis.Input{BaseRev: data.Good, HeadRev: data.Bad, Base: base, Head: head, History: hist}, opts)
	data.Report.Warnings = append(data.Report.Warnings, "base is the "+plural(len(data.Before), "commit")+" before the change point and head the "+
		plural(len(data.After), "commit")+" from it on (their baseline runs on "+t.Machine+"), not two commits: a difference names the change, a bisection finds its commit")
	data.Summary = render.Headline(data.Report)
	data.View = render.NewView(data.Report, htmlFormatter)
	// One size of the change on the page, the table's: the trend's change
	// of medians (Change) differs from it, and is the JSON's only.
	data.Size = changeSize(data.Report, data.View, key, ch)
	// Bisect the series' own phase; for total, the phases that moved with
	// it (or total itself when none did).
	if key.Phase != totalPhase && key.Phase != "" {
		data.Bisect = []BisectHint{bisectHint(repo, data.Good, data.Bad, key, data.Report.ConfigPath)}
	} else {
		data.Bisect = bisectHints(repo, data.Good, data.Bad, data.Report)
		if len(data.Bisect) == 0 {
			data.Bisect = []BisectHint{bisectHint(repo, data.Good, data.Bad, key, data.Report.ConfigPath)}
		}
	}
	return data, nil
}

// CommitData is a commit's page: what the store knows of it, its runs
// and the stored comparisons that include it.
type CommitData struct {
	Repo       string    `json:"repo"`
	SHA        string    `json:"sha"`
	Subject    string    `json:"subject,omitempty"`
	AuthorTime time.Time `json:"author_time,omitzero"`
	Parents    []string  `json:"parents"`
	CommitURL  string    `json:"commit_url,omitempty"`
	// Runs counts the commit's stored runs by kind, machine and status.
	Runs []RunCount `json:"runs"`
	// Comparisons are the newest stored comparisons that have the commit
	// as base or head (commitComparisons of them).
	Comparisons []IndexComparison `json:"comparisons"`
	// Series are the trends of the headline series the commit's baseline
	// runs measured.
	Series []CommitSeries `json:"series"`
	// ParentCompareURL compares the commit with its first parent: the
	// newest stored comparison of the two by its id
	// (ParentComparisonID), or else a comparison of their runs.
	ParentCompareURL   string `json:"parent_compare_url,omitempty"`
	ParentComparisonID int64  `json:"parent_comparison_id,omitempty"`
	// Links for the template; not in the JSON.
	ParentLinks []template.URL `json:"-"`
}

// A CommitSeries is a series a commit's baseline runs measured, and its
// trend page at the commit.
type CommitSeries struct {
	Key      analysis.Key `json:"key"`
	TrendURL string       `json:"trend_url"`
}

// A RunCount counts a commit's runs of one kind on one machine that
// ended one way.
type RunCount struct {
	Kind    string `json:"kind"`
	Machine string `json:"machine"`
	Status  string `json:"status"`
	Runs    int    `json:"runs"`
}

// commitComparisons is how many comparisons a commit's page lists.
const commitComparisons = 50

func (d *Dashboard) commit(r *http.Request) (any, error) {
	q := r.URL.Query()
	ctx := r.Context()
	repo, sha := q.Get("repo"), strings.ToLower(q.Get("sha"))
	switch {
	case repo == "":
		return nil, badRequest("repo is required: the repository as the index (/) lists it")
	case !shaRE.MatchString(sha):
		return nil, badRequest("sha=%s: want a commit SHA (or a unique beginning of 4 or more digits), as the trend pages show them", sha)
	}
	if len(sha) < 40 {
		full, err := d.cfg.Store.ResolveCommit(ctx, repo, sha)
		switch {
		case errors.Is(err, store.ErrNotFound):
			return nil, notFound("%v: a trend page (from the index, /) links each commit it charts", err)
		case errors.Is(err, store.ErrAmbiguous):
			return nil, badRequest("%v: give more of it", err)
		case err != nil:
			return nil, err
		}
		sha = full
	}
	runs, err := d.cfg.Store.Runs(ctx, store.RunQuery{Repo: repo, Commits: []string{sha}})
	if err != nil {
		return nil, err
	}
	comps, err := d.cfg.Store.CommitComparisons(ctx, repo, sha, commitComparisons)
	if err != nil {
		return nil, err
	}
	if len(runs) == 0 && len(comps) == 0 {
		return nil, notFound("no stored runs or comparisons of commit %s in %s: a trend page (from the index, /) links each commit it charts", sha, repo)
	}
	data := &CommitData{Repo: repo, SHA: sha, CommitURL: commitURL(repo, sha), Parents: []string{}, Runs: []RunCount{},
		Comparisons: []IndexComparison{}, Series: []CommitSeries{}}
	known, err := d.cfg.Store.Commits(ctx, repo, []string{sha})
	if err != nil {
		return nil, err
	}
	if c, ok := known[sha]; ok {
		data.Subject, data.AuthorTime = c.Subject, c.AuthorTime
		data.Parents = append(data.Parents, c.Parents...)
	}
	for _, p := range data.Parents {
		data.ParentLinks = append(data.ParentLinks, template.URL(commitPageURL(repo, p)))
	}
	if len(data.Parents) > 0 {
		// The link names the comparison it means: the pair's newest as
		// this page sees it, not whichever is newest when it is followed.
		pair, err := d.cfg.Store.PairComparisons(ctx, repo, data.Parents[0], sha)
		if err != nil {
			return nil, err
		}
		data.ParentCompareURL = compareURL(repo, data.Parents[0], sha)
		if len(pair) > 0 {
			data.ParentComparisonID, data.ParentCompareURL = pair[0].ID, comparisonURL(pair[0].ID)
		}
	}
	counts := map[RunCount]int{}
	seen := map[analysis.Key]bool{}
	for _, run := range runs {
		counts[RunCount{Kind: string(run.Kind), Machine: run.Machine, Status: string(run.Status)}]++
		if run.Kind != store.KindBaseline || run.Status != analysis.StatusOK || run.Tool != "" {
			continue
		}
		for _, s := range run.Samples {
			if (s.Key.Phase == totalPhase || s.Key.Phase == "") && !seen[s.Key] {
				seen[s.Key] = true
				data.Series = append(data.Series, CommitSeries{Key: s.Key, TrendURL: trendURL(repo, s.Key, "all") + "#c-" + short(sha)})
			}
		}
	}
	for c, n := range counts {
		c.Runs = n
		data.Runs = append(data.Runs, c)
	}
	slices.SortFunc(data.Runs, func(a, b RunCount) int {
		return cmp.Or(strings.Compare(a.Kind, b.Kind), strings.Compare(a.Machine, b.Machine), strings.Compare(a.Status, b.Status))
	})
	if data.Comparisons, err = d.indexComparisons(ctx, comps); err != nil {
		return nil, err
	}
	return data, nil
}

// plural says n things: "1 commit", "3 commits".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}

package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/changepoint"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/github"
	"github.com/perfbot/perfbot/store"
)

// changePointConfig is a repository's change_points section of the bot
// config: whether change points on the default branch are reported on
// their commit, and how they are detected.
//
// Reporting is off by default: a commit comment notifies the commit's
// author and everyone watching the repository, and stays there, so a
// team turns it on once the runner's noise is known (perfbot calibrate)
// and min_change sits above it; until then perfbot trend and the
// dashboard show the same change points without notifying anyone.
type changePointConfig struct {
	Report bool `yaml:"report"`
	// Window is how far back the series is read: 90d, 12w, 2160h.
	Window string `yaml:"window"`
	// MinChange is the smallest change reported, a fraction of the
	// median (0.05 is 5%).
	MinChange float64 `yaml:"min_change"`
	// Alpha and MinSegment are the detector's (analysis/changepoint).
	Alpha      float64 `yaml:"alpha"`
	MinSegment int     `yaml:"min_segment"`
	// Recent is how many of the newest commits of a series a change
	// point may land on to be reported: the detector needs MinSegment
	// commits after a change point to find it, so it appears a few
	// pushes after the commit that made it; older ones (a series seen for
	// the first time) are history, not news.
	Recent int `yaml:"recent"`

	window time.Duration
}

// Defaults of changePointConfig.
const (
	defaultChangeWindow    = 90 * 24 * time.Hour
	defaultChangeMinChange = 0.05
	defaultChangeAlpha     = 0.01
	defaultChangeMinSeg    = 5
	defaultChangeRecent    = 10
)

// check fills in the defaults and returns what is wrong, as sentences
// for the config's error.
func (c *changePointConfig) check() []string {
	var bad []string
	c.window = defaultChangeWindow
	if c.Window != "" {
		d, err := parseWindow(c.Window)
		if err != nil {
			bad = append(bad, fmt.Sprintf("window %q: %v", c.Window, err))
		}
		c.window = d
	}
	switch {
	case c.MinChange == 0:
		c.MinChange = defaultChangeMinChange
	case !(c.MinChange > 0 && c.MinChange < 1):
		bad = append(bad, fmt.Sprintf("min_change %v: a fraction of the median between 0 and 1, such as 0.05 for 5%%", c.MinChange))
	}
	switch {
	case c.Alpha == 0:
		c.Alpha = defaultChangeAlpha
	case !(c.Alpha > 0 && c.Alpha < 1):
		bad = append(bad, fmt.Sprintf("alpha %v: a significance level between 0 and 1, such as 0.01", c.Alpha))
	}
	switch {
	case c.MinSegment == 0:
		c.MinSegment = defaultChangeMinSeg
	case c.MinSegment < 2:
		bad = append(bad, fmt.Sprintf("min_segment %d: at least 2 commits", c.MinSegment))
	}
	switch {
	case c.Recent == 0:
		c.Recent = defaultChangeRecent
	case c.Recent < 1:
		bad = append(bad, fmt.Sprintf("recent %d: at least 1 commit", c.Recent))
	}
	return bad
}

// parseWindow parses 90d, 12w, 36h or a Go duration.
func parseWindow(s string) (time.Duration, error) {
	now := time.Now()
	if _, err := time.Parse(time.DateOnly, s); err == nil || s == "all" {
		return 0, errors.New("want a duration such as 90d, 12w or 2160h")
	}
	since, err := parseSince(s, now)
	if err != nil {
		return 0, err
	}
	return now.Sub(since), nil
}

// changeStore is what change-point reporting reads and writes; *store.DB
// satisfies it.
type changeStore interface {
	Runs(ctx context.Context, q store.RunQuery) ([]store.RunRecord, error)
	Trend(ctx context.Context, repo string, key analysis.Key, since time.Time) ([]store.TrendPoint, error)
	ReportedChanges(ctx context.Context, repo, machine string) ([]store.ReportedChange, error)
	ClaimChange(ctx context.Context, c store.ReportedChange) (bool, error)
	ReleaseChange(ctx context.Context, c store.ReportedChange) error
}

// commitCommenter posts a comment on a commit; *github.Client satisfies it.
type commitCommenter interface {
	CommitComment(ctx context.Context, repo github.Repo, sha, body string) (github.Comment, error)
}

// A changeReporter reports new change points on the default branch on
// the commits where they start.
type changeReporter struct {
	store changeStore
	gh    commitCommenter
	log   *slog.Logger
	now   func() time.Time // time.Now when nil
}

// A pushedBaseline is a default-branch commit whose baseline runs were
// just stored.
type pushedBaseline struct {
	Repo       string // owner/name on GitHub
	StoredRepo string // the repository as the runs are stored (the clone URL)
	Machine    string
	SHA        string
	// ConfigPath is the config file the runs were measured with when it
	// came from the server config (config: FILE), for the printed bisect
	// command to pass as --config; "" for the repository's .perfbot.yml.
	ConfigPath string
	// History is the branch's first-parent history up to SHA, oldest
	// first: the order of each series' commits. When nil, commits are in
	// the order of their first runs, which is the branch's only if they
	// were measured in that order (backfill measures older commits later).
	History []analysis.HistoryCommit
}

// A newChange is a change point to report, with what its comment shows.
type newChange struct {
	claim  store.ReportedChange
	change analysis.TrendChange
	prev   string // the series' commit before it: bisect's good end
}

// report detects the change points of every sec/op series the pushed
// commit's baseline runs measured, on its machine, over cfg's window, and
// reports each new one that lands on one of the newest cfg.Recent commits
// of its series: one comment per commit, naming every series that changed
// there. A change point is claimed in the store before it is posted and
// released when posting fails, so it is reported once however often this
// runs; one within MinSegment commits of a reported one of the same
// series is the same change, moved by the runs added since, and is not
// reported again. It returns the comments posted.
func (r *changeReporter) report(ctx context.Context, cfg changePointConfig, p pushedBaseline) (int, error) {
	ghRepo, err := github.ParseRepo(p.Repo)
	if err != nil {
		return 0, err
	}
	runs, err := r.store.Runs(ctx, store.RunQuery{
		Repo: p.StoredRepo, Commits: []string{p.SHA}, Kind: store.KindBaseline,
		Machine: p.Machine, Status: analysis.StatusOK,
	})
	if err != nil {
		return 0, err
	}
	var keys []analysis.Key
	for _, run := range runs {
		if run.Tool != "" {
			continue
		}
		for _, s := range run.Samples {
			if s.Key.Unit == "sec/op" && !slices.Contains(keys, s.Key) {
				keys = append(keys, s.Key)
			}
		}
	}
	slices.SortFunc(keys, func(a, b analysis.Key) int {
		return cmp.Or(cmp.Compare(a.Benchmark, b.Benchmark), cmp.Compare(a.Phase, b.Phase))
	})
	reported, err := r.store.ReportedChanges(ctx, p.StoredRepo, p.Machine)
	if err != nil {
		return 0, err
	}
	now := time.Now
	if r.now != nil {
		now = r.now
	}
	since := now().Add(-cfg.window)
	opts := changepoint.Options{Alpha: cfg.Alpha, MinSegment: cfg.MinSegment, MinChange: cfg.MinChange}

	byCommit := map[string][]newChange{}
	var order []string
	for _, key := range keys {
		points, err := r.store.Trend(ctx, p.StoredRepo, key, since)
		if err != nil {
			return 0, err
		}
		trunsOf := make([]analysis.TrendRun, len(points))
		for i, pt := range points {
			trunsOf[i] = analysis.TrendRun{Commit: pt.Commit, Machine: pt.Machine, Started: pt.StartedAt, Value: pt.Value}
		}
		t, err := analysis.NewTrend(analysis.TrendInput{Repo: p.StoredRepo, Key: key, Since: since, Runs: trunsOf, Machine: p.Machine, History: p.History},
			analysis.TrendOptions{ChangePoints: opts})
		if errors.Is(err, analysis.ErrNoRuns) || errors.Is(err, analysis.ErrUnknownMachine) || errors.Is(err, analysis.ErrNotOnHistory) {
			continue
		}
		if err != nil {
			return 0, err
		}
		index := make(map[string]int, len(t.Commits))
		for i, c := range t.Commits {
			index[c.Commit] = i
		}
		for _, ch := range t.ChangePoints {
			if ch.Index < len(t.Commits)-cfg.Recent || ch.Direction == "none" || !(math.Abs(ch.ChangePct) >= cfg.MinChange*100) {
				continue
			}
			if !settled(t, ch) || nearReported(reported, key, ch.Index, index, cfg.MinSegment) {
				continue
			}
			nc := newChange{
				claim:  store.ReportedChange{Repo: p.StoredRepo, Machine: p.Machine, Key: key, Commit: ch.Commit},
				change: ch,
				prev:   t.Commits[ch.Index-1].Commit, // a change point never starts a series
			}
			if _, ok := byCommit[ch.Commit]; !ok {
				order = append(order, ch.Commit)
			}
			byCommit[ch.Commit] = append(byCommit[ch.Commit], nc)
		}
	}

	posted := 0
	var errs []error
	for _, sha := range order {
		var claimed []newChange
		for _, nc := range byCommit[sha] {
			ok, err := r.store.ClaimChange(ctx, nc.claim)
			if err != nil {
				errs = append(errs, err)
				continue
			}
			if ok {
				claimed = append(claimed, nc)
			}
		}
		if len(claimed) == 0 {
			continue
		}
		body := changeComment(cfg, p, sha, claimed)
		c, err := r.gh.CommitComment(ctx, ghRepo, sha, body)
		if err != nil {
			// Not posted: release the claims so that a later push reports them.
			for _, nc := range claimed {
				if rerr := r.store.ReleaseChange(context.WithoutCancel(ctx), nc.claim); rerr != nil {
					err = errors.Join(err, rerr)
				}
			}
			errs = append(errs, err)
			continue
		}
		posted++
		r.log.Info("change point reported", "repo", p.Repo, "sha", sha, "series", len(claimed), "url", c.URL)
	}
	return posted, errors.Join(errs...)
}

// settled says whether change point ch of t sits where the level
// changes: its commit's median is nearer the new segment's median than the
// old one's, and its parent's nearer the old. Near the end of a series
// the detector can place a step a few commits early, so as to have
// MinSegment commits after it; such a point is left for a later push,
// whose runs move it onto the commit that made the change.
func settled(t *analysis.Trend, ch analysis.TrendChange) bool {
	at, before := t.Commits[ch.Index].Median, t.Commits[ch.Index-1].Median
	return math.Abs(at-ch.After) < math.Abs(at-ch.Before) && math.Abs(before-ch.Before) < math.Abs(before-ch.After)
}

// nearReported says whether a reported change point of key lies on one of
// the commits within minSegment of index in the series.
func nearReported(reported []store.ReportedChange, key analysis.Key, index int, pos map[string]int, minSegment int) bool {
	for _, rc := range reported {
		if rc.Key != key {
			continue
		}
		if i, ok := pos[rc.Commit]; ok && abs(i-index) < minSegment {
			return true
		}
	}
	return false
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// changeMarker marks perfbot's change-point comments.
func changeMarker(sha string) string { return github.MarkerPrefix + "change-point " + sha + " -->" }

// changeComment renders the comment on the commit where changes start.
func changeComment(cfg changePointConfig, p pushedBaseline, sha string, changes []newChange) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n### perfbot: the default branch's performance changed at this commit\n\n", changeMarker(sha))
	fmt.Fprintf(&b, "Baseline runs on machine `%s`; change points by E-Divisive means over the last %s (α %s, at least %d commits a side, changes of %s or more).\n\n",
		p.Machine, formatWindow(cfg.window), strconv.FormatFloat(cfg.Alpha, 'f', -1, 64), cfg.MinSegment, formatPct(cfg.MinChange*100))
	b.WriteString("| benchmark | phase | before | after | change | p |\n| --- | --- | --- | --- | --- | --- |\n")
	for _, nc := range changes {
		ch := nc.change
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s (%s) | %s |\n", nc.claim.Key.Benchmark, cmp.Or(nc.claim.Key.Phase, "—"),
			formatSeconds(ch.Before), formatSeconds(ch.After), fmt.Sprintf("%+.1f%%", ch.ChangePct), ch.Direction,
			strconv.FormatFloat(ch.PValue, 'g', 2, 64))
	}
	b.WriteString("\nTo look closer:\n\n```sh\n")
	for _, nc := range changes {
		k := nc.claim.Key
		repo, bench, phase := render.FormatArgs([]string{p.StoredRepo}), render.FormatArgs([]string{k.Benchmark}), render.FormatArgs([]string{k.Phase})
		fmt.Fprintf(&b, "perfbot trend --repo %s --machine %s --benchmark %s --phase %s --since %s\n",
			repo, render.FormatArgs([]string{p.Machine}), bench, phase, formatWindow(cfg.window))
		bisect := fmt.Sprintf("perfbot bisect --repo %s --good %s --bad %s --benchmark %s --phase %s", repo, nc.prev, nc.claim.Commit, bench, phase)
		if p.ConfigPath != "" {
			bisect += " --config " + render.FormatArgs([]string{p.ConfigPath})
		}
		b.WriteString(bisect + "\n")
	}
	b.WriteString("```\n")
	return b.String()
}

func formatSeconds(v float64) string {
	d := time.Duration(v * 1e9)
	switch {
	case d >= time.Second:
		return d.Round(time.Millisecond).String()
	case d >= time.Millisecond:
		return d.Round(10 * time.Microsecond).String()
	default:
		return d.String()
	}
}

func formatPct(pct float64) string {
	return strconv.FormatFloat(pct, 'f', 1, 64) + "%"
}

func formatWindow(d time.Duration) string {
	if d%(24*time.Hour) == 0 {
		return fmt.Sprintf("%dd", d/(24*time.Hour))
	}
	return d.String()
}

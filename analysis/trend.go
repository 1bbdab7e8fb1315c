package analysis

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/analysis/changepoint"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
	"golang.org/x/perf/benchmath"
	"golang.org/x/perf/benchunit"
)

// This file turns the stored baseline runs of one series into its history:
// one median with its interval per commit, in branch order, and the
// commits where the series changed.

// A TrendRun is one ok baseline run's value of the series a trend charts.
type TrendRun struct {
	Commit  string // full SHA
	Machine string
	Started time.Time
	Value   float64 // the run's value (its median, when it measured several)
}

// A HistoryCommit is one commit of a branch's first-parent history.
type HistoryCommit struct {
	SHA     string
	Subject string
}

// A TrendInput is what NewTrend charts.
type TrendInput struct {
	// Repo names the repository, as the store does; for the record.
	Repo string
	Key  Key
	// Since is where the window of runs starts (zero: all runs); for the
	// record.
	Since time.Time
	// Runs are the runs in the window, in any order, of any machines.
	Runs []TrendRun
	// Machine picks the machine whose runs are charted; "" picks the one
	// with the most runs (see NewTrend).
	Machine string
	// History, when not nil, is the branch's first-parent history, oldest
	// first (its last commit is the branch head): the commits are charted
	// in its order and commits with runs that are not on it are left out.
	// When nil, commits are ordered by their first run in the window.
	History []HistoryCommit
}

// TrendOptions configure NewTrend. The zero value means the defaults.
type TrendOptions struct {
	// Confidence is the level of each commit's interval of the median
	// (default 0.95, as compare's).
	Confidence float64
	// ChangePoints are the change-point detector's options; zero fields
	// take changepoint's defaults (alpha 0.01, 199 permutations, minimum
	// segment 5, no minimum change), except that an alpha below 0.01 gets
	// enough permutations (2/alpha − 1) for its p-values to go below it.
	ChangePoints changepoint.Options
}

// The orders a trend's commits can be in.
const (
	OrderFirstParent = "first-parent" // TrendInput.History's order
	OrderFirstRun    = "first-run"    // the order of each commit's first run
)

// Errors NewTrend wraps; callers branch on them with errors.Is.
var (
	// ErrNoRuns means the input has no runs at all.
	ErrNoRuns = errors.New("no runs")
	// ErrUnknownMachine means TrendInput.Machine ran none of the runs.
	ErrUnknownMachine = errors.New("unknown machine")
	// ErrNotOnHistory means none of the commits with runs is on
	// TrendInput.History.
	ErrNotOnHistory = errors.New("no commit with runs is on the history")
)

// A Trend is the history of one series (benchmark, phase, unit) on one
// machine: per commit, in branch order, the median of its runs' values
// and the median's confidence interval (benchmath.AssumeNothing, as
// compare computes them), and the change points found in the medians
// (analysis/changepoint's E-Divisive means).
//
// Its JSON form is perfbot trend --format json, with these fields:
// repo, benchmark, phase, unit; better ("lower" or "higher": which way is
// better for the unit); machine (the one charted) and machines (every
// machine with runs in the window: machine, runs, commits; most runs
// first); since (RFC 3339; absent for all runs); order ("first-parent" or
// "first-run") and head (the history's newest commit, with
// first-parent); confidence; detector (method, alpha, permutations,
// min_segment, min_change); commits; change_points; segments; left_out
// (SHAs with runs that are not on the history); notes (caveats, as
// sentences). Lists are never null.
type Trend struct {
	Repo string `json:"repo"`
	Key
	Better     string         `json:"better"`
	Machine    string         `json:"machine"`
	Machines   []TrendMachine `json:"machines"`
	Since      time.Time      `json:"since,omitzero"`
	Order      string         `json:"order"`
	Head       string         `json:"head,omitempty"`
	Confidence float64        `json:"confidence"`
	Detector   TrendDetector  `json:"detector"`
	// Commits are in Order, oldest first; Commits[i].Index is i.
	Commits      []TrendCommit  `json:"commits"`
	ChangePoints []TrendChange  `json:"change_points"`
	Segments     []TrendSegment `json:"segments"`
	LeftOut      []string       `json:"left_out"`
	// Notes are the caveats a reader must see: how the commits are
	// ordered, what was left out, commits without an interval.
	Notes []string `json:"notes"`
}

// A TrendMachine counts one machine's runs in a trend's window.
type TrendMachine struct {
	Machine string `json:"machine"`
	Runs    int    `json:"runs"`
	Commits int    `json:"commits"`
}

// A TrendDetector records the change-point detector's effective options.
type TrendDetector struct {
	Method       string  `json:"method"`
	Alpha        float64 `json:"alpha"`
	Permutations int     `json:"permutations"`
	MinSegment   int     `json:"min_segment"`
	MinChange    float64 `json:"min_change"` // a fraction: 0.02 is 2%
}

// A TrendCommit is one commit's point of a trend. Its JSON fields are
// index, commit, subject (when the history gave one), first_run (RFC
// 3339), runs, median, lo and hi (the interval; null when there are too
// few runs for one, fewer than 6 at 95%) and change_point (true on the
// first commit of a new segment).
type TrendCommit struct {
	Index       int       `json:"index"`
	Commit      string    `json:"commit"`
	Subject     string    `json:"subject,omitempty"`
	FirstRun    time.Time `json:"first_run"`
	Runs        int       `json:"runs"`
	Median      float64   `json:"median"`
	Lo          float64   `json:"lo"`
	Hi          float64   `json:"hi"`
	ChangePoint bool      `json:"change_point"`
}

// A TrendChange is a change point: the series' medians from commit Index
// on form a new segment. Its JSON fields are index, commit, p_value,
// before and after (the medians of the segments that end and start
// there), change_pct (after/before − 1, in percent; null when before is
// 0) and direction ("regression" or "improvement" by the unit's better
// direction; "none" for no change).
type TrendChange struct {
	Index     int     `json:"index"`
	Commit    string  `json:"commit"`
	PValue    float64 `json:"p_value"`
	Before    float64 `json:"before"`
	After     float64 `json:"after"`
	ChangePct float64 `json:"change_pct"`
	Direction string  `json:"direction"`
}

// A TrendSegment is a run of commits between change points,
// Commits[Start:End], and the median of their medians.
type TrendSegment struct {
	Start  int     `json:"start"`
	End    int     `json:"end"`
	Median float64 `json:"median"`
}

// NewTrend charts in's runs.
//
// One machine per trend: runs of different machines are never mixed,
// because a different host's hardware would show as a change point where
// the runs switch hosts. in.Machine picks it; when it is empty, the
// machine with the most runs in the window is charted (ties: the one with
// the newest run, then the first name), because a routine look at a trend
// should show the main runner's series rather than fail over a stray run
// from another host. The choice is never silent: Machines lists every
// machine and a note names the ones left out.
//
// The commits are ordered by in.History when it is given (commits with
// runs that are not on it are left out, listed and counted in a note),
// and by their first run otherwise (also noted). Each commit's runs are
// summarized as compare summarizes a side; the change points come from
// changepoint.Detect on the medians in that order.
func NewTrend(in TrendInput, opts TrendOptions) (*Trend, error) {
	if len(in.Runs) == 0 {
		return nil, fmt.Errorf("trend of %s: %w", in.Key, ErrNoRuns)
	}
	conf := cmp.Or(opts.Confidence, DefaultOptions().Confidence)
	if !(conf > 0 && conf < 1) {
		return nil, fmt.Errorf("trend: confidence %v: must be between 0 and 1, e.g. 0.95", conf)
	}
	cpOpts := detectorOptions(opts.ChangePoints)
	t := &Trend{
		Repo:       in.Repo,
		Key:        in.Key,
		Better:     "lower",
		Since:      in.Since,
		Order:      OrderFirstRun,
		Confidence: conf,
		Detector: TrendDetector{
			Method:       "e-divisive means",
			Alpha:        cpOpts.Alpha,
			Permutations: cpOpts.Permutations,
			MinSegment:   cpOpts.MinSegment,
			MinChange:    cpOpts.MinChange,
		},
		ChangePoints: []TrendChange{},
		Segments:     []TrendSegment{},
		LeftOut:      []string{},
		Notes:        []string{},
	}
	if HigherIsBetter(in.Key.Unit) {
		t.Better = "higher"
	}
	t.Machines = countMachines(in.Runs)
	machine, err := pickMachine(in.Machine, t.Machines)
	if err != nil {
		return nil, fmt.Errorf("trend of %s: %w", in.Key, err)
	}
	t.Machine = machine

	commits := groupCommits(in.Runs, machine)
	if in.History != nil {
		t.Order = OrderFirstParent
		if len(in.History) > 0 {
			t.Head = in.History[len(in.History)-1].SHA
		}
		commits, t.LeftOut = orderByHistory(commits, in.History)
		if len(commits) == 0 {
			return nil, fmt.Errorf("trend of %s: %w: none of the %d commits with runs of %s is on the first-parent history of %s",
				in.Key, ErrNotOnHistory, len(t.LeftOut), machine, fmtx.ShortRev(t.Head))
		}
	}

	series := make([]float64, len(commits))
	fewRuns := 0
	for i, c := range commits {
		s := benchmath.NewSample(c.values, &benchmath.DefaultThresholds) // sorts c.values: they are ours
		sum := summarize(s, conf)
		t.Commits = append(t.Commits, TrendCommit{
			Index: i, Commit: c.sha, Subject: c.subject, FirstRun: c.first,
			Runs: sum.N, Median: sum.Median, Lo: sum.Lo, Hi: sum.Hi,
		})
		series[i] = sum.Median
		if !stats.Finite(sum.Lo) || !stats.Finite(sum.Hi) {
			fewRuns++
		}
	}

	points, err := changepoint.Detect(series, cpOpts)
	if err != nil {
		return nil, fmt.Errorf("trend of %s: %w", in.Key, err)
	}
	start := 0
	for _, p := range points {
		t.Commits[p.Index].ChangePoint = true
		t.ChangePoints = append(t.ChangePoints, TrendChange{
			Index:     p.Index,
			Commit:    t.Commits[p.Index].Commit,
			PValue:    p.P,
			Before:    p.Before,
			After:     p.After,
			ChangePct: p.Change * 100,
			Direction: direction(p.Change, t.Better == "higher"),
		})
		t.Segments = append(t.Segments, TrendSegment{Start: start, End: p.Index, Median: p.Before})
		start = p.Index
	}
	last := stats.MedianOf(series[start:])
	if n := len(points); n > 0 {
		last = points[n-1].After
	}
	t.Segments = append(t.Segments, TrendSegment{Start: start, End: len(series), Median: last})

	t.Notes = t.notes(fewRuns)
	return t, nil
}

// detectorOptions returns o with changepoint's defaults in its zero
// fields, so that a trend records what the detector used. An alpha below
// 0.01 gets 2/alpha − 1 permutations instead of 199, so that the
// smallest p-value the test can give, 1/(permutations+1), is half of it.
func detectorOptions(o changepoint.Options) changepoint.Options {
	if o.Alpha == 0 {
		o.Alpha = 0.01
	}
	if o.Permutations == 0 {
		o.Permutations = 199
		if o.Alpha > 0 && o.Alpha < 0.01 {
			o.Permutations = int(math.Ceil(2/o.Alpha)) - 1
		}
	}
	if o.MinSegment == 0 {
		o.MinSegment = 5
	}
	return o
}

// direction names a change of a series by which way is better.
func direction(change float64, higherIsBetter bool) string {
	switch {
	case change == 0 || math.IsNaN(change):
		return "none"
	case (change > 0) == higherIsBetter:
		return string(VerdictImprovement)
	default:
		return string(VerdictRegression)
	}
}

// countMachines counts each machine's runs and commits, most runs first
// (ties: the newest run first, then by name).
func countMachines(runs []TrendRun) []TrendMachine {
	type acc struct {
		runs    int
		newest  time.Time
		commits map[string]bool
	}
	by := make(map[string]*acc)
	for _, r := range runs {
		a := by[r.Machine]
		if a == nil {
			a = &acc{commits: make(map[string]bool)}
			by[r.Machine] = a
		}
		a.runs++
		a.commits[r.Commit] = true
		if r.Started.After(a.newest) {
			a.newest = r.Started
		}
	}
	out := make([]TrendMachine, 0, len(by))
	for m, a := range by {
		out = append(out, TrendMachine{Machine: m, Runs: a.runs, Commits: len(a.commits)})
	}
	slices.SortFunc(out, func(x, y TrendMachine) int {
		return cmp.Or(
			cmp.Compare(y.Runs, x.Runs),
			by[y.Machine].newest.Compare(by[x.Machine].newest),
			strings.Compare(x.Machine, y.Machine))
	})
	return out
}

// pickMachine returns want when it ran any of the runs, or the machine
// with the most runs when want is empty.
func pickMachine(want string, machines []TrendMachine) (string, error) {
	if want == "" {
		return machines[0].Machine, nil
	}
	for _, m := range machines {
		if m.Machine == want {
			return want, nil
		}
	}
	return "", fmt.Errorf("%w %q: no run in the window ran there; they ran on %s", ErrUnknownMachine, want, machineList(machines))
}

// machineList describes machines with their run counts:
// `"gpu-1" (40 runs), "gpu-2" (3 runs)`.
func machineList(ms []TrendMachine) string {
	parts := make([]string, len(ms))
	for i, m := range ms {
		parts[i] = fmt.Sprintf("%q (%s)", m.Machine, fmtx.Plural(m.Runs, "run"))
	}
	return fmtx.List(parts, 10)
}

// commitRuns are one commit's values on the charted machine.
type commitRuns struct {
	sha, subject string
	first        time.Time
	values       []float64
}

// groupCommits groups machine's runs by commit, ordered by each commit's
// first run (ties by SHA).
func groupCommits(runs []TrendRun, machine string) []*commitRuns {
	by := make(map[string]*commitRuns)
	var out []*commitRuns
	for _, r := range runs {
		if r.Machine != machine {
			continue
		}
		c := by[r.Commit]
		if c == nil {
			c = &commitRuns{sha: r.Commit, first: r.Started}
			by[r.Commit] = c
			out = append(out, c)
		}
		if r.Started.Before(c.first) {
			c.first = r.Started
		}
		c.values = append(c.values, r.Value)
	}
	slices.SortFunc(out, func(a, b *commitRuns) int {
		return cmp.Or(a.first.Compare(b.first), strings.Compare(a.sha, b.sha))
	})
	return out
}

// orderByHistory puts commits in history's order and returns those not
// on it apart, by SHA.
func orderByHistory(commits []*commitRuns, history []HistoryCommit) (ordered []*commitRuns, leftOut []string) {
	pos := make(map[string]int, len(history))
	for i, h := range history {
		pos[h.SHA] = i
	}
	leftOut = []string{}
	for _, c := range commits {
		i, ok := pos[c.sha]
		if !ok {
			leftOut = append(leftOut, c.sha)
			continue
		}
		c.subject = history[i].Subject
		ordered = append(ordered, c)
	}
	slices.SortFunc(ordered, func(a, b *commitRuns) int { return cmp.Compare(pos[a.sha], pos[b.sha]) })
	slices.Sort(leftOut)
	return ordered, leftOut
}

// notes writes a trend's caveats.
func (t *Trend) notes(fewRuns int) []string {
	notes := []string{}
	switch t.Order {
	case OrderFirstRun:
		notes = append(notes, "Commits are in the order of their first runs in the window, which is the branch's order only if "+
			"they were measured in that order (a backfill is not); give the repository's git clone (perfbot trend --git DIR) "+
			"to order them by first-parent history.")
	case OrderFirstParent:
		if n := len(t.LeftOut); n > 0 {
			short := make([]string, n)
			for i, sha := range t.LeftOut {
				short[i] = fmtx.ShortRev(sha)
			}
			notes = append(notes, fmt.Sprintf("%s with runs %s not on the first-parent history of %s and %s left out: %s "+
				"(commits of other branches, merged ones, or ones the clone has not fetched).",
				fmtx.Plural(n, "commit"), isAre(n), fmtx.ShortRev(t.Head), isAre(n), fmtx.List(short, 10)))
		}
	}
	if len(t.Machines) > 1 {
		var others []TrendMachine
		for _, m := range t.Machines {
			if m.Machine != t.Machine {
				others = append(others, m)
			}
		}
		notes = append(notes, fmt.Sprintf("Only the runs of %q are charted; runs of %s in the window are not "+
			"(each machine is a series of its own; perfbot trend --machine NAME charts another).", t.Machine, machineList(others)))
	}
	if fewRuns > 0 {
		notes = append(notes, fmt.Sprintf("%d of %s %s too few runs for a %s interval of the median (at least %d are needed): "+
			"shown as ±∞, null in JSON.",
			fewRuns, fmtx.Plural(len(t.Commits), "commit"), haveHas(fewRuns), FormatLevel(t.Confidence), minRunsForInterval(t.Confidence)))
	}
	if need := 2 * t.Detector.MinSegment; len(t.Commits) < need {
		notes = append(notes, fmt.Sprintf("Change points need at least %d commits (twice the minimum segment of %d); this trend has %d.",
			need, t.Detector.MinSegment, len(t.Commits)))
	}
	return notes
}

// minRunsForInterval is the fewest runs whose median has an interval at
// the confidence level: the smallest n with 2·0.5ⁿ ≤ 1 − confidence
// (6 at 95%).
func minRunsForInterval(confidence float64) int {
	n := 1
	for 2*math.Pow(0.5, float64(n)) > 1-confidence {
		n++
	}
	return n
}

func isAre(n int) string {
	if n == 1 {
		return "is"
	}
	return "are"
}

func haveHas(n int) string {
	if n == 1 {
		return "has"
	}
	return "have"
}

// MarshalJSON writes an infinite Lo or Hi as null.
func (c TrendCommit) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Index       int       `json:"index"`
		Commit      string    `json:"commit"`
		Subject     string    `json:"subject,omitempty"`
		FirstRun    time.Time `json:"first_run"`
		Runs        int       `json:"runs"`
		Median      float64   `json:"median"`
		Lo          *float64  `json:"lo"`
		Hi          *float64  `json:"hi"`
		ChangePoint bool      `json:"change_point"`
	}{c.Index, c.Commit, c.Subject, c.FirstRun, c.Runs, c.Median, nullable(c.Lo), nullable(c.Hi), c.ChangePoint})
}

// UnmarshalJSON reads a null Lo as −∞ and a null Hi as +∞.
func (c *TrendCommit) UnmarshalJSON(b []byte) error {
	type plain TrendCommit
	v := struct {
		*plain
		Lo *float64 `json:"lo"`
		Hi *float64 `json:"hi"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	c.Lo, c.Hi = orElse(v.Lo, math.Inf(-1)), orElse(v.Hi, math.Inf(1))
	return nil
}

// MarshalJSON writes an infinite ChangePct as null.
func (c TrendChange) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Index     int      `json:"index"`
		Commit    string   `json:"commit"`
		PValue    float64  `json:"p_value"`
		Before    float64  `json:"before"`
		After     float64  `json:"after"`
		ChangePct *float64 `json:"change_pct"`
		Direction string   `json:"direction"`
	}{c.Index, c.Commit, c.PValue, c.Before, c.After, nullable(c.ChangePct), c.Direction})
}

// UnmarshalJSON reads a null ChangePct as +∞ (a change from 0).
func (c *TrendChange) UnmarshalJSON(b []byte) error {
	type plain TrendChange
	v := struct {
		*plain
		ChangePct *float64 `json:"change_pct"`
	}{plain: (*plain)(c)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	c.ChangePct = orElse(v.ChangePct, math.Inf(1))
	return nil
}

func (c TrendCommit) Summary() Summary {
	return Summary{Median: c.Median, Lo: c.Lo, Hi: c.Hi, N: c.Runs}
}

// Scaler is one scale for every median of t, so that the column reads
// in one prefix.
func (t *Trend) Scaler() benchunit.Scaler {
	vals := make([]float64, len(t.Commits))
	for i, c := range t.Commits {
		vals[i] = c.Median
	}
	return fmtx.Scaler(t.Unit, vals...)
}

// AxisScale returns how a chart's value axis shows t's medians: divided
// by factor, in the unit label, with the prefix the text output uses
// ("ms/op" for sec/op values in milliseconds, "MiB/op" for B/op, "k
// instructions/op" for a count in thousands).
func (t *Trend) AxisScale() (factor float64, label string) {
	s := t.Scaler()
	switch {
	case s.Prefix == "":
		return s.Factor, t.Unit
	case fmtx.IsTimeUnit(t.Unit):
		return s.Factor, s.Prefix + "s" + strings.TrimPrefix(t.Unit, "sec")
	case benchunit.ClassOf(t.Unit) == benchunit.Binary:
		return s.Factor, s.Prefix + t.Unit
	default:
		return s.Factor, s.Prefix + " " + t.Unit
	}
}

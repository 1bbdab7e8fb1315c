package analysis

import (
	"encoding/json"
	"fmt"
	"math"

	"github.com/perfbot/perfbot/analysis/stats"
)

// This file is bisect's strategy: which commit of a range to measure
// next, and what a measured commit's values say about it. The runner
// measures and stores; nothing here does I/O.

// A ProbeClass is what a bisection makes of a commit it measured.
type ProbeClass string

// The classes of a probe.
const (
	// ProbeGood: its values look like the good end's.
	ProbeGood ProbeClass = "good"
	// ProbeBad: its values look like the bad end's.
	ProbeBad ProbeClass = "bad"
	// ProbeSkipped: it could not be measured (its build failed, or no
	// run of it measured the series), as git bisect skip.
	ProbeSkipped ProbeClass = "skipped"
	// ProbeUnclear is Classify's answer when the tests do not settle
	// it: the values look like both ends, or like neither.
	ProbeUnclear ProbeClass = "unclear"
)

// CompareSeries compares one series' values, head against base, as
// Compare compares a series that is the only one of its report: the
// medians and their intervals, Mann-Whitney U (a Holm family of one, so
// PValue is PRaw adjusted for the looks alone), the floor, the change's
// interval and the verdict with its reason. base and head hold one value
// per run; looks says which look of a sequential design this is (the
// zero Looks: the only one).
func CompareSeries(key Key, base, head []float64, floor Floor, opts Options, looks stats.Looks) Row {
	return compareSeries(key, base, head, nil, floor, opts, looks)
}

// CompareRounds is CompareSeries of values measured in rounds, base[i]
// beside head[i] in round i: with Options.Paired the row is decided on
// the rounds' own ratios, as Compare decides a paired row.
func CompareRounds(key Key, base, head []float64, floor Floor, opts Options, looks stats.Looks) Row {
	var pairs []float64
	if opts.Paired && len(base) == len(head) {
		rounds := make([]int, len(base))
		for i := range rounds {
			rounds[i] = i + 1
		}
		pairs = stats.PairedLogRatios(base, head, rounds, rounds)
	}
	return compareSeries(key, base, head, pairs, floor, opts, looks)
}

func compareSeries(key Key, base, head, pairs []float64, floor Floor, opts Options, looks stats.Looks) Row {
	opts = opts.withDefaults()
	if len(looks.Runs) == 0 {
		looks = stats.FixedLooks(min(len(base), len(head)))
	}
	c := &comparer{opts: opts, looks: looks, shifts: make(map[Key]stats.Shift)}
	rows := []Row{c.row(key, base, head, pairs, floor)}
	c.adjust(rows)
	c.decide(&rows[0],
		&side{runs: SideRuns{Total: len(base), OK: len(base)}},
		&side{runs: SideRuns{Total: len(head), OK: len(head)}})
	c.detectable(rows)
	rows[0].Headline = rows[0].Primary // the one series compared
	return rows[0]
}

// A Classification is how one commit's values of a series compare with
// the good and the bad end's.
type Classification struct {
	// Class is ProbeGood when the values differ from the bad end's and
	// not from the good end's, ProbeBad for the reverse, and
	// ProbeUnclear when they differ from both ends or from neither.
	Class ProbeClass `json:"class"`
	// Nearer is ProbeGood or ProbeBad: the end whose median the
	// commit's median is nearer (ProbeGood on a tie). It is what an
	// unclear commit is taken to be once more runs cannot settle it.
	Nearer ProbeClass `json:"nearer"`
	// VsGood and VsBad compare the commit (head) against each end
	// (base), as CompareSeries does.
	VsGood Row `json:"vs_good"`
	VsBad  Row `json:"vs_bad"`
	// NeedMoreRuns reports, for an unclear commit, that more runs of it
	// may settle it: a comparison is inconclusive for too few runs or
	// for noise. A commit between the ends (it differs from both)
	// stays unclear however long it is measured.
	NeedMoreRuns bool `json:"need_more_runs"`
}

// Classify compares a commit's values of a series (probe, one per run)
// with the good and the bad end's, with Compare's test and floor. A
// comparison that finds a regression or an improvement counts as a
// difference; no change and inconclusive do not. looks are the probe's
// looks so far: each comparison tests at their sequential threshold, so
// adding runs to an unsettled probe does not raise the chance of taking
// it for the wrong end.
func Classify(key Key, good, bad, probe []float64, floor Floor, opts Options, looks stats.Looks) Classification {
	return classify(CompareSeries(key, good, probe, floor, opts, looks), CompareSeries(key, bad, probe, floor, opts, looks))
}

// ClassifyRounds is Classify of values measured in rounds: good[i],
// bad[i] and probe[i] ran beside each other in round i (CompareRounds).
func ClassifyRounds(key Key, good, bad, probe []float64, floor Floor, opts Options, looks stats.Looks) Classification {
	return classify(CompareRounds(key, good, probe, floor, opts, looks), CompareRounds(key, bad, probe, floor, opts, looks))
}

func classify(vsGood, vsBad Row) Classification {
	c := Classification{
		VsGood: vsGood,
		VsBad:  vsBad,
		Class:  ProbeUnclear,
		Nearer: ProbeGood,
	}
	m := c.VsGood.Head.Median
	if math.Abs(m-c.VsBad.Base.Median) < math.Abs(m-c.VsGood.Base.Median) {
		c.Nearer = ProbeBad
	}
	fromGood, fromBad := changed(c.VsGood), changed(c.VsBad)
	switch {
	case fromGood && !fromBad:
		c.Class = ProbeBad
	case fromBad && !fromGood:
		c.Class = ProbeGood
	default:
		c.NeedMoreRuns = c.VsGood.NeedMoreRuns() || c.VsBad.NeedMoreRuns()
	}
	return c
}

// changed reports whether a row found a regression or an improvement.
func changed(row Row) bool {
	return row.Verdict == VerdictRegression || row.Verdict == VerdictImprovement
}

// NeedMoreRuns reports whether more runs could settle the row: it is
// inconclusive for too few runs, for noise, or not yet confirmed (as
// Report.NeedMoreRuns asks of the primary rows).
func (row Row) NeedMoreRuns() bool {
	return row.Verdict == VerdictInconclusive &&
		(row.Reason == ReasonTooFewRuns || row.Reason == ReasonTooNoisy || row.Reason == ReasonUnconfirmed)
}

// Changed reports whether the row found a regression or an improvement.
func (row Row) Changed() bool { return changed(row) }

// A Bisection is the state of a binary search for the first bad commit
// of a range: commits 0 … n−1 of good..bad, oldest first, where the good
// end (before commit 0) is good and commit n−1, the bad end, is bad. The
// caller measures the commit Next names and Marks it, until Next says
// the search is over. Commits marked skipped are stepped around, as git
// bisect skip does: the next probe is the untested commit nearest the
// middle. When skipped commits are all that is left between the last
// good and the first bad commit, the answer is a range (Candidates).
type Bisection struct {
	class    []ProbeClass // "" while untested
	lastGood int          // -1: the good end
	firstBad int
}

// NewBisection starts a search of a range of n ≥ 1 commits.
func NewBisection(n int) *Bisection {
	b := &Bisection{class: make([]ProbeClass, max(n, 1)), lastGood: -1, firstBad: max(n, 1) - 1}
	b.class[b.firstBad] = ProbeBad
	return b
}

// Next returns the commit to measure next, or false when the search is
// over: the one halfway between the last good and the first bad commit,
// or when that one is skipped, the untested one nearest it (the older on
// a tie).
func (b *Bisection) Next() (int, bool) {
	mid := b.lastGood + (b.firstBad-b.lastGood)/2
	for d := 0; mid-d > b.lastGood || mid+d < b.firstBad; d++ {
		for _, i := range []int{mid - d, mid + d} {
			if i > b.lastGood && i < b.firstBad && b.class[i] == "" {
				return i, true
			}
		}
	}
	return 0, false
}

// Mark records what commit i turned out to be: ProbeGood, ProbeBad or
// ProbeSkipped. i must be an untested commit between the last good and
// the first bad one.
func (b *Bisection) Mark(i int, c ProbeClass) error {
	if i <= b.lastGood || i >= b.firstBad || b.class[i] != "" {
		return fmt.Errorf("bisection: commit %d is not an untested commit between the last good (%d) and the first bad (%d)", i, b.lastGood, b.firstBad)
	}
	switch c {
	case ProbeGood:
		b.lastGood = i
	case ProbeBad:
		b.firstBad = i
	case ProbeSkipped:
	default:
		return fmt.Errorf("bisection: commit %d marked %q; want good, bad or skipped", i, c)
	}
	b.class[i] = c
	return nil
}

// LastGood returns the newest commit known good: -1 for the good end.
func (b *Bisection) LastGood() int { return b.lastGood }

// FirstBad returns the oldest commit known bad.
func (b *Bisection) FirstBad() int { return b.firstBad }

// Candidates returns the commits that may be the first bad one, oldest
// first: the skipped commits between the last good and the first bad
// commit, then the first bad one. Once the search is over without skips
// in the way, that is the first bad commit alone.
func (b *Bisection) Candidates() []int {
	var out []int
	for i := b.lastGood + 1; i <= b.firstBad; i++ {
		if b.class[i] == ProbeSkipped || i == b.firstBad {
			out = append(out, i)
		}
	}
	return out
}

// The orders a bisection searches a range in (BisectReport.Order).
const (
	// BisectFirstParent: the first-parent chain from good to bad, as
	// `git rev-list --first-parent`; a merged branch is one step, its
	// merge commit.
	BisectFirstParent = "first-parent"
	// BisectAllCommits: every commit of good..bad in a topological order
	// (each after its parents). A commit of a merged branch is measured
	// without the main-line commits made beside it, so the search
	// assumes that a change, once in, stays in every later commit of
	// that order.
	BisectAllCommits = "all-commits"
)

// A BisectCommit names a commit in a bisection's report.
type BisectCommit struct {
	SHA     string `json:"sha"`
	Subject string `json:"subject,omitempty"`
}

// A Probe is one commit a bisection measured, or tried to: the two ends
// and every commit the search probed.
type Probe struct {
	// Step is the probe's place in the search, 1, 2, …; 0 for the ends.
	Step int `json:"step"`
	// End is "good" or "bad" for the two ends, "" for a probe.
	End    string       `json:"end,omitempty"`
	Commit BisectCommit `json:"commit"`
	// Position is the commit's place in good..bad: 1 for the oldest,
	// BisectReport.Commits for the bad end, 0 for the good end.
	Position int `json:"position"`
	// Class is ProbeGood, ProbeBad or ProbeSkipped.
	Class ProbeClass `json:"class"`
	// Uncertain marks a probe whose tests did not settle it at the
	// most runs allowed: it was taken for the end its median is nearer.
	Uncertain bool `json:"uncertain,omitempty"`
	// Reason says why a probe was skipped or is uncertain.
	Reason string `json:"reason,omitempty"`
	// Median and Runs summarize its values (one per ok run that measured
	// the series); Runs is 0 for a skipped probe.
	Median float64 `json:"median"`
	Runs   int     `json:"runs"`
	// Reused counts the stored runs it reused, Measured the runs made
	// for it by this bisection (ok or not).
	Reused   int `json:"reused"`
	Measured int `json:"measured"`
	// VsGood and VsBad compare a measured probe against each end; nil
	// for the ends and for skipped probes.
	VsGood *Row `json:"vs_good,omitempty"`
	VsBad  *Row `json:"vs_bad,omitempty"`
	// Rounds are the rounds it was judged on (BisectSearch), for the
	// caller to count the stored ones it reused; not in the JSON.
	Rounds []RoundID `json:"-"`
}

// A BisectReport is a finished bisection: the change it looked for, the
// first bad commit and its comparison against the last good one, every
// probe, and how to reproduce it. It is a pure value that
// RenderBisectMarkdown, RenderBisectText and RenderBisectJSON print.
type BisectReport struct {
	// Repo is the repository as the runner opened it.
	Repo string `json:"repo"`
	// Key is the series searched.
	Key Key `json:"key"`
	// Order is BisectFirstParent or BisectAllCommits.
	Order     string       `json:"order"`
	Good, Bad BisectCommit `json:"-"`
	// Commits is the number of commits in good..bad, the bad end
	// included.
	Commits int `json:"commits"`
	// Change compares the bad end (head) against the good end (base):
	// the change the bisection looked for.
	Change Row `json:"change"`
	// FirstBad is the first commit whose values look like the bad
	// end's, and LastGood the commit before it that looks like the good
	// end's (the good end itself when FirstBad is the oldest commit).
	FirstBad BisectCommit `json:"first_bad"`
	LastGood BisectCommit `json:"last_good"`
	// Candidates lists the commits that may be the first bad one,
	// oldest first, when skipped commits leave a range: the skipped
	// ones between LastGood and FirstBad, then FirstBad. It is empty
	// when FirstBad is certain to be first.
	Candidates []BisectCommit `json:"candidates,omitempty"`
	// Probes are the two ends (good, then bad), then the probes in the
	// order they were measured.
	Probes []Probe `json:"probes"`
	// Stopped says a probe could not be placed on either side within
	// the most rounds allowed: the search stopped there, and Candidates
	// is every commit after LastGood up to FirstBad.
	Stopped bool `json:"stopped,omitempty"`
	// Comparison compares every series of FirstBad's runs (head)
	// against LastGood's (base), as perfbot compare does, on the rounds
	// they ran in beside each other.
	Comparison *Report `json:"comparison,omitempty"`
	// Confirmation is the searched series' row of that comparison as
	// the search judged it (one series, compare's α and floor), and
	// Confirmed says it shows the ends' change in the same direction.
	Confirmation *Row `json:"confirmation,omitempty"`
	Confirmed    bool `json:"confirmed"`
	// Reproduce are shell commands that measure the change again.
	Reproduce []string `json:"reproduce"`
	// Warnings are the caveats a reader must see.
	Warnings []string `json:"warnings"`
}

// MarshalJSON writes Good and Bad under "good" and "bad".
func (r BisectReport) MarshalJSON() ([]byte, error) {
	type plain BisectReport
	return json.Marshal(struct {
		plain
		Good BisectCommit `json:"good"`
		Bad  BisectCommit `json:"bad"`
	}{plain(r), r.Good, r.Bad})
}

// UnmarshalJSON reads what MarshalJSON writes.
func (r *BisectReport) UnmarshalJSON(b []byte) error {
	type plain BisectReport
	v := struct {
		*plain
		Good BisectCommit `json:"good"`
		Bad  BisectCommit `json:"bad"`
	}{plain: (*plain)(r)}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	r.Good, r.Bad = v.Good, v.Bad
	return nil
}

// Exact reports whether the first bad commit is known exactly: no
// skipped commit between it and the last good one, no probe left
// unplaced, and its own comparison with the last good one shows the
// change.
func (r *BisectReport) Exact() bool { return len(r.Candidates) <= 1 && !r.Stopped && r.Confirmed }

// MeasuredProbes counts the probes (the ends left out) that ran at least
// one run in this bisection.
func (r *BisectReport) MeasuredProbes() int {
	n := 0
	for _, p := range r.Probes {
		if p.End == "" && p.Measured > 0 {
			n++
		}
	}
	return n
}

// Skipped returns the probes that were skipped.
func (r *BisectReport) Skipped() []Probe {
	var out []Probe
	for _, p := range r.Probes {
		if p.Class == ProbeSkipped {
			out = append(out, p)
		}
	}
	return out
}

// RunCounts returns the runs the bisection reused and made, over every
// commit it measured.
func (r *BisectReport) RunCounts() (reused, measured int) {
	for _, p := range r.Probes {
		reused += p.Reused
		measured += p.Measured
	}
	return reused, measured
}

package analysis

import (
	"fmt"
	"math"
	"slices"

	"github.com/perfbot/perfbot/analysis/stats"
)

// A RoundID names one round of measurements: the runs one session made
// in its round Round, each commit of the round once, in a random order.
// Runs of one round ran beside each other, so a drift of the machine
// between rounds moves them alike. Session 0 is the session measuring
// now; stored rounds carry their session's id.
type RoundID struct {
	Session int64 `json:"session"`
	Round   int   `json:"round"`
}

// A BisectStep is what a BisectSearch asks the runner to measure next:
// Rounds more rounds in which every commit of Positions runs once (0 is
// the good end, n the bad end, 1 … n−1 the commits between), numbered
// From, From+1, … in the current session.
type BisectStep struct {
	Positions []int
	Rounds    int
	From      int
}

// A BisectSearch is bisect's strategy, with the measuring left to its
// caller. It judges every commit only by rounds in which that commit ran
// beside the ones it is compared with, so that a machine whose speed
// drifts over the minutes a bisection takes moves both sides of each
// comparison alike:
//
//  1. The ends: rounds of the good and the bad end, Count, then batches
//     while unsettled, up to MaxCount, judged as compare judges (α,
//     sequential looks). If they do not differ there is nothing to
//     bisect.
//  2. Each probe: rounds of the probe beside the current last good and
//     first bad commit (the ends at first), judged by Classify on those
//     rounds alone at the probe's share of α (ProbeAlpha), so that the
//     chance of any probe taken for the wrong side is at most α over the
//     whole bisection. A probe still unclear at MaxCount rounds stops
//     the search: the change is somewhere in the range left, and the
//     answer says so (BisectReport.Candidates), never a guess.
//  3. The confirmation: rounds of the last good and the first bad commit
//     beside each other (those of the last probe count, as they ran
//     together), judged as compare judges; the answer is exact only when
//     it shows the change the ends showed, in the same direction.
//
// Rounds stored by earlier sessions count wherever the commits a step
// compares all ran in them (Record with their RoundID).
type BisectSearch struct {
	key                    Key
	n                      int
	floor                  Floor
	opts                   Options
	count, maxCount, batch int
	probes                 int // the probes α is shared among (ProbeAlpha)

	vals map[int]map[RoundID]float64
	seen []RoundID // every round recorded, in order
	// used marks, per commit, the stored rounds (of earlier sessions)
	// some judgement used: what the bisection reused.
	used   map[int]map[RoundID]bool
	failed map[int]string
	round  int // the last round number handed out in this session

	search *Bisection
	stage  searchStage
	cur    int // the probe being measured (stage probe), 0 for none
	asked  int // rounds asked for in the current step
	looks  []int
	step   int // probes begun

	change    Row
	results   []Probe
	confirm   *Row
	confirmed []RoundID
	confLooks stats.Looks
	stopped   bool // a probe could not be classified
	nothing   bool // the ends do not differ
}

type searchStage int

const (
	stageEnds searchStage = iota
	stageProbe
	stageConfirm
	stageDone
)

// NewBisectSearch starts the search of key over a range of n ≥ 1
// commits (the bad end included), with compare's floor and options,
// count rounds a step, growing to at most maxCount while unsettled.
func NewBisectSearch(key Key, n int, floor Floor, opts Options, count, maxCount int) *BisectSearch {
	opts = opts.withDefaults()
	n = max(n, 1)
	count = max(count, 1)
	return &BisectSearch{
		key: key, n: n, floor: floor, opts: opts,
		count: count, maxCount: max(maxCount, count), batch: max(2, count/2),
		probes: max(1, int(math.Ceil(math.Log2(float64(n))))),
		vals:   map[int]map[RoundID]float64{}, failed: map[int]string{}, used: map[int]map[RoundID]bool{},
		search: NewBisection(n),
	}
}

// ProbeAlpha is the false-alarm rate each comparison of the step-th
// probe (from 1) is tested at: α/(K+1) for the K = ⌈log2 n⌉ probes a
// search without skips makes, then half as much for each probe beyond
// (skipped commits add probes), so that over any number of probes they
// add up to at most α.
func (s *BisectSearch) ProbeAlpha(step int) float64 {
	a := s.opts.Alpha / float64(s.probes+1)
	if step > s.probes {
		a /= math.Pow(2, float64(step-s.probes))
	}
	return a
}

// MaxBuilds and MaxRuns bound what the search may take, for the plan a
// bisection prints up front: every probe of a search without skips and
// the two ends built, and every step at its most rounds.
func (s *BisectSearch) MaxBuilds() int { return s.probes + 2 }

// MaxRuns is the most runs the search may make without skips: the ends,
// each probe beside two commits, and the confirmation, each at MaxCount
// rounds.
func (s *BisectSearch) MaxRuns() int { return s.maxCount * (2 + 3*s.probes + 2) }

// NewRound hands out the next round number of the current session, for
// rounds the caller measures outside a step (the ends' first round, which
// shows which series a benchmark measures).
func (s *BisectSearch) NewRound() int {
	s.round++
	return s.round
}

// Record gives the search one run's value of the key: commit pos ran in
// round r. A run that failed, or did not measure the key, is not
// recorded; its round then does not count for that commit.
func (s *BisectSearch) Record(pos int, r RoundID, v float64) {
	if s.vals[pos] == nil {
		s.vals[pos] = map[RoundID]float64{}
	}
	if _, ok := s.vals[pos][r]; !ok && !slices.Contains(s.seen, r) {
		s.seen = append(s.seen, r)
	}
	s.vals[pos][r] = v
	if r.Session == 0 {
		s.round = max(s.round, r.Round)
	}
}

// Fail says commit pos cannot be measured (its build failed): a probe is
// skipped, as git bisect skip.
func (s *BisectSearch) Fail(pos int, reason string) { s.failed[pos] = reason }

// aligned returns the rounds in which every commit of ps has a value, in
// the order they were recorded, and each commit's values in them.
func (s *BisectSearch) aligned(ps []int) ([]RoundID, [][]float64) {
	var rounds []RoundID
	vals := make([][]float64, len(ps))
	for _, r := range s.seen {
		ok := true
		for _, p := range ps {
			if _, has := s.vals[p][r]; !has {
				ok = false
				break
			}
		}
		if !ok {
			continue
		}
		rounds = append(rounds, r)
		for i, p := range ps {
			vals[i] = append(vals[i], s.vals[p][r])
			if r.Session != 0 {
				if s.used[p] == nil {
					s.used[p] = map[RoundID]bool{}
				}
				s.used[p][r] = true
			}
		}
	}
	return rounds, vals
}

// Reused returns how many stored rounds' values of commit pos (from
// earlier sessions) the search has used.
func (s *BisectSearch) Reused(pos int) int { return len(s.used[pos]) }

// positions returns the current last good and first bad commit.
func (s *BisectSearch) ends() (good, bad int) {
	return s.search.LastGood() + 1, s.search.FirstBad() + 1
}

// Next returns the step to measure, or false when the search is over.
func (s *BisectSearch) Next() (BisectStep, bool) {
	for {
		switch s.stage {
		case stageEnds:
			st, ok, settled := s.judgeEnds()
			if !settled {
				return st, ok
			}
		case stageProbe:
			if st, ok := s.nextProbe(); ok {
				return st, true
			}
		case stageConfirm:
			st, ok, settled := s.judgeConfirm()
			if !settled {
				return st, ok
			}
		default:
			return BisectStep{}, false
		}
	}
}

// more asks for rounds of ps: to Count aligned rounds, then a batch at a
// time up to MaxCount. It returns false when no more may be asked for:
// the step has had MaxCount aligned rounds, or twice that asked (runs
// that keep failing leave rounds unaligned).
func (s *BisectSearch) more(ps []int, m int) (BisectStep, bool) {
	want := s.count - m
	if m >= s.count {
		want = min(s.batch, s.maxCount-m)
	}
	if want <= 0 || s.asked >= 2*s.maxCount {
		return BisectStep{}, false
	}
	s.asked += want
	st := BisectStep{Positions: slices.Clone(ps), Rounds: want, From: s.round + 1}
	s.round += want
	return st, true
}

// look records a look at m aligned rounds, unless the last one was at m.
func (s *BisectSearch) look(m int) stats.Looks {
	if len(s.looks) == 0 || s.looks[len(s.looks)-1] != m {
		s.looks = append(s.looks, m)
	}
	return stats.Looks{Runs: slices.Clone(s.looks), Max: max(s.maxCount, m)}
}

func (s *BisectSearch) beginStep() { s.asked, s.looks = 0, nil }

// judgeEnds measures and judges the ends. settled means the stage moved
// on; otherwise st is the step to measure (ok false: the search is over).
func (s *BisectSearch) judgeEnds() (st BisectStep, ok, settled bool) {
	ps := []int{0, s.n}
	_, v := s.aligned(ps)
	m := len(v[0])
	if m < s.count {
		if st, ok := s.more(ps, m); ok {
			return st, true, false
		}
	}
	row := CompareRounds(s.key, v[0], v[1], s.floor, s.opts, s.look(m))
	if row.NeedMoreRuns() {
		if st, ok := s.more(ps, m); ok {
			return st, true, false
		}
	}
	s.change = row
	rounds, _ := s.aligned(ps)
	s.results = append(s.results, s.endProbe("good", 0, v[0], rounds), s.endProbe("bad", s.n, v[1], rounds))
	if !row.Changed() {
		s.nothing, s.stage = true, stageDone
		return BisectStep{}, false, false
	}
	s.stage = stageProbe
	s.beginStep()
	return BisectStep{}, false, true
}

func (s *BisectSearch) endProbe(end string, pos int, v []float64, rounds []RoundID) Probe {
	return Probe{End: end, Position: pos, Class: map[string]ProbeClass{"good": ProbeGood, "bad": ProbeBad}[end],
		Median: stats.MedianOf(v), Runs: len(v), Rounds: rounds}
}

// nextProbe returns the next step of the probe stage, moving on to the
// confirmation (or the end) when the search is over.
func (s *BisectSearch) nextProbe() (BisectStep, bool) {
	for {
		if s.cur == 0 {
			i, ok := s.search.Next()
			if !ok {
				s.stage = stageConfirm
				s.beginStep()
				return BisectStep{}, false
			}
			s.cur, s.step = i+1, s.step+1
			s.beginStep()
		}
		if reason, failed := s.failed[s.cur]; failed {
			s.finishProbe(Probe{Class: ProbeSkipped, Reason: reason}, ProbeSkipped)
			continue
		}
		good, bad := s.ends()
		ps := []int{good, s.cur, bad}
		rounds, v := s.aligned(ps)
		m := len(rounds)
		if m < s.count {
			if st, ok := s.more(ps, m); ok {
				return st, true
			}
		}
		if m == 0 {
			s.finishProbe(Probe{Class: ProbeSkipped, Reason: "no run of it measured " + s.key.String()}, ProbeSkipped)
			continue
		}
		opts := s.opts
		opts.Alpha = s.ProbeAlpha(s.step)
		cl := ClassifyRounds(s.key, v[0], v[2], v[1], s.floor, opts, s.look(m))
		if cl.Class == ProbeUnclear && cl.NeedMoreRuns {
			if st, ok := s.more(ps, m); ok {
				return st, true
			}
		}
		p := Probe{Class: cl.Class, VsGood: &cl.VsGood, VsBad: &cl.VsBad, Median: stats.MedianOf(v[1]), Runs: m, Rounds: rounds}
		if cl.Class == ProbeUnclear {
			p.Uncertain = true
			p.Reason = fmt.Sprintf("at %d rounds beside c%d and c%d, against the good side %s and against the bad side %s: "+
				"the change is not settled at this commit, so the search stops here", m, good, bad,
				describeRow(cl.VsGood), describeRow(cl.VsBad))
			s.finishProbe(p, "")
			s.stopped, s.stage = true, stageDone
			return BisectStep{}, false
		}
		s.finishProbe(p, cl.Class)
	}
}

// finishProbe records the current probe's result and marks it in the
// search (unless mark is "": an unclear probe stops the search).
func (s *BisectSearch) finishProbe(p Probe, mark ProbeClass) {
	p.Step, p.Position = s.step, s.cur
	s.results = append(s.results, p)
	if mark != "" {
		_ = s.search.Mark(s.cur-1, mark) // cur came from Next: open
	}
	s.cur = 0
}

// judgeConfirm measures and judges the last good commit against the
// first bad one.
func (s *BisectSearch) judgeConfirm() (st BisectStep, ok, settled bool) {
	good, bad := s.ends()
	ps := []int{good, bad}
	rounds, v := s.aligned(ps)
	m := len(rounds)
	if m < s.count {
		if st, ok := s.more(ps, m); ok {
			return st, true, false
		}
	}
	looks := s.look(m)
	row := CompareRounds(s.key, v[0], v[1], s.floor, s.opts, looks)
	if row.NeedMoreRuns() {
		if st, ok := s.more(ps, m); ok {
			return st, true, false
		}
	}
	s.confirm, s.confirmed, s.confLooks, s.stage = &row, rounds, looks, stageDone
	return BisectStep{}, false, true
}

// describeRow says what a comparison found: "regression +4.1% [+2.0,
// +6.3]", "no change", "inconclusive (too noisy)".
func describeRow(row Row) string {
	switch {
	case row.Changed():
		return fmt.Sprintf("%s %s", row.Verdict, FormatChange(row))
	case row.Verdict == VerdictInconclusive && row.Reason != "":
		return fmt.Sprintf("inconclusive (%s) %s", row.Reason, FormatChange(row))
	}
	return fmt.Sprintf("%s %s", row.Verdict, FormatChange(row))
}

// Nothing reports that the ends do not differ: there is nothing to
// bisect (Change says by how much they differ).
func (s *BisectSearch) Nothing() bool { return s.nothing }

// Change compares the bad end against the good end, on their rounds.
func (s *BisectSearch) Change() Row { return s.change }

// Probes returns the ends (good, then bad) and every probe so far, in
// the order they were decided; Commit, Reused and Measured are the
// caller's to fill.
func (s *BisectSearch) Probes() []Probe { return slices.Clone(s.results) }

// LastGood and FirstBad return the positions of the last commit known
// good (0: the good end) and the first known bad.
func (s *BisectSearch) LastGood() int { good, _ := s.ends(); return good }

// FirstBad returns the position of the first commit known bad.
func (s *BisectSearch) FirstBad() int { _, bad := s.ends(); return bad }

// Candidates returns the positions that may hold the change, oldest
// first: every commit after the last good one up to the first bad one
// when a probe stopped the search, else the skipped ones between them
// and the first bad one.
func (s *BisectSearch) Candidates() []int {
	good, bad := s.ends()
	if s.stopped {
		var out []int
		for p := good + 1; p <= bad; p++ {
			out = append(out, p)
		}
		return out
	}
	var out []int
	for _, i := range s.search.Candidates() {
		out = append(out, i+1)
	}
	return out
}

// Stopped reports that a probe could not be classified within MaxCount
// rounds: the search stopped with the range Candidates gives.
func (s *BisectSearch) Stopped() bool { return s.stopped }

// Confirmation returns the comparison of the first bad commit against
// the last good one on the rounds they ran in together, those rounds and
// the looks it was judged at; nil when the search stopped before it.
func (s *BisectSearch) Confirmation() (*Row, []RoundID, stats.Looks) {
	return s.confirm, slices.Clone(s.confirmed), s.confLooks
}

// Confirmed reports whether the confirmation shows the ends' change: a
// change in the same direction.
func (s *BisectSearch) Confirmed() bool {
	return s.confirm != nil && s.confirm.Changed() && s.confirm.Verdict == s.change.Verdict
}

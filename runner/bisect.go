package runner

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/analysis/stats"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/store"
)

// A BisectRequest asks for the first commit between Good and Bad whose
// values of one series look like Bad's rather than Good's.
type BisectRequest struct {
	Source    string // repository path or clone URL
	Good, Bad string // any git revisions; Good must be an ancestor of Bad
	// Benchmark, Phase and Unit name the series. Phase "" is "total" and
	// Unit "" is "sec/op". Benchmark "" is the one benchmark whose runs
	// of the good end measure that phase in that unit; where several do,
	// the error names them.
	Benchmark, Phase, Unit string
	// AllCommits searches every commit of good..bad in a topological
	// order (each after its parents) instead of the first-parent chain
	// (see analysis.BisectAllCommits).
	AllCommits bool
	// Count is the runs each measured commit needs, stored ones
	// included; MaxCount caps them when a commit's comparison is
	// unsettled. 0 keeps the config's count and max_count.
	Count, MaxCount int
	// Seed seeds the order of the ends within their rounds (the config's
	// order:); 0 picks a new one, which the log shows.
	Seed uint64
	// OnProbe, when set, hears of every probe once decided: the good
	// and the bad end first, then each probed commit. It is called from
	// the goroutine that called Bisect.
	OnProbe func(analysis.Probe)
	// OnProgress, when set, is called after every run (warm-ups
	// included).
	OnProgress func(Progress)
}

// A BisectResult is a finished bisection.
type BisectResult struct {
	// Report is what the bisection found, for rendering.
	Report *analysis.BisectReport
	// Range is good..bad as searched, oldest first (the bad end last).
	Range              []workspace.Commit
	Good, Bad          workspace.Commit
	FirstBad, LastGood workspace.Commit
	Config             *Config
	ConfigSource       string
	// ComparisonID is the stored comparison of FirstBad against
	// LastGood (Report.Comparison).
	ComparisonID int64
	// Reused and Measured count the runs reused from the store and made
	// now, over every commit.
	Reused, Measured int
}

// Errors Bisect wraps; callers branch on them with errors.Is.
var (
	// ErrNothingToBisect: the good and the bad end do not differ in the
	// series (the error gives the comparison's numbers).
	ErrNothingToBisect = errors.New("nothing to bisect")
	// ErrUnknownSeries: the runs do not measure the series asked for,
	// or more than one benchmark measures it (the error lists them).
	ErrUnknownSeries = errors.New("unknown series")
	// ErrEndFailed: the good or the bad end did not build, or none of
	// its runs measured the series, so there is nothing to search
	// between.
	ErrEndFailed = errors.New("an end of the range could not be measured")
	// ErrEmptyRange: good and bad are the same commit.
	ErrEmptyRange = errors.New("empty range")
)

// Bisect finds the first commit of good..bad that changed one series,
// by binary search over the range's first-parent chain (or all its
// commits, BisectRequest.AllCommits), with the config read from the good
// commit as Compare reads it from the base. analysis.BisectSearch is the
// strategy; Bisect builds, runs and stores what it asks for.
//
// Every comparison is made on rounds in which its commits ran beside
// each other, each once a round in a random order, so that a machine
// whose speed drifts over the bisection moves both sides alike: the ends
// first (Count rounds, then batches while unsettled up to MaxCount; if
// they do not differ the error wraps ErrNothingToBisect and gives the
// numbers), then each probe beside the current last good and first bad
// commit, at its share of α over the whole bisection, then the last good
// and the first bad commit beside each other, compared as Compare does
// (stored, in Report.Comparison). A probe still unclear at MaxCount
// rounds stops the search, and the answer is the range left. Rounds
// stored by earlier sessions (of any kind, same config hash and machine)
// count wherever the commits compared all ran in them; stored runs of a
// commit measured apart from its comparison count for nothing. A commit
// that does not build, or none of whose runs measured the series, is
// skipped as git bisect skips; when skipped commits are all that lies
// between the last good and the first bad commit, the report gives them
// all as candidates.
func (r *Runner) Bisect(ctx context.Context, req BisectRequest) (*BisectResult, error) {
	ws, err := r.open(ctx, req.Source)
	if err != nil {
		return nil, err
	}
	good, err := resolve(ctx, ws, "good", req.Good)
	if err != nil {
		return nil, err
	}
	bad, err := resolve(ctx, ws, "bad", req.Bad)
	if err != nil {
		return nil, err
	}
	if good.SHA == bad.SHA {
		return nil, fmt.Errorf("%w: good (%s) and bad (%s) are both %s; give a good revision older than the bad one",
			ErrEmptyRange, req.Good, req.Bad, good.Short())
	}
	order, list := analysis.BisectFirstParent, ws.FirstParentRange
	if req.AllCommits {
		order, list = analysis.BisectAllCommits, ws.AllCommitsRange
	}
	commits, err := list(ctx, good.SHA, bad.SHA)
	if err != nil {
		return nil, err
	}
	if len(commits) == 0 || commits[len(commits)-1].SHA != bad.SHA {
		return nil, fmt.Errorf("%w: %s..%s lists no commits ending at %s", ErrEmptyRange, good.Short(), bad.Short(), bad.Short())
	}
	cfg, source, err := r.loadConfig(ctx, ws, good.SHA)
	if err != nil {
		return nil, err
	}
	r.log().Info("config", "source", source, "hash", cfg.Hash()[:12])

	b := &bisection{r: r, req: req, ws: ws, cfg: cfg, source: source, producers: map[int]bool{},
		commits: commits, good: good, probes: map[int]*probe{}}
	if b.ss, err = r.newSession(ctx, ws, cfg, store.KindBisect); err != nil {
		return nil, err
	}
	defer b.ss.end(ctx)
	seed := b.ss.seed(req.Seed)
	b.machine, b.hash = b.ss.env.ID(), cfg.Hash()
	b.count = b.ss.count(req.Count)
	b.maxCount = max(b.count, cfg.MaxCount)
	if req.MaxCount > 0 {
		b.maxCount = max(b.count, req.MaxCount)
	}
	b.opts = r.optionsFor(cfg)
	for i := range cfg.Benchmarks {
		b.benches = append(b.benches, i)
	}
	b.ss.prog = newProgress(r.Progress, 0)
	b.ss.prog.observe = req.OnProgress
	defer b.ss.prog.finish()
	r.log().Info("bisect", "good", good.Short(), "bad", bad.Short(), "order", order, "commits", len(commits),
		"count", b.count, "max_count", b.maxCount, "order", cfg.Order, "seed", seed)

	n := len(commits)
	goodP, badP := b.probe(0), b.probe(n)
	if err := b.resolveKey(ctx, goodP, badP); err != nil {
		return nil, err
	}
	hist, err := r.Store.History(ctx, store.HistoryQuery{Repo: ws.Source(), Machine: b.machine, ConfigHash: b.hash, Limit: 100})
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	b.floor = analysis.NoiseFloor(hist[b.key], b.opts)
	b.search = analysis.NewBisectSearch(b.key, n, b.floor, b.opts, b.count, b.maxCount)
	if r.Progress != nil {
		fmt.Fprintf(r.Progress, "perfbot: bisect %s..%s, %d commits, %s: at most %d builds and %d runs without skips (%d to %d rounds a step)\n",
			good.Short(), bad.Short(), n, b.key, min(b.search.MaxBuilds(), n+1), b.search.MaxRuns(), b.count, b.maxCount)
	}
	if err := b.loadStored(ctx); err != nil {
		return nil, err
	}
	for _, p := range []*probe{goodP, badP} {
		b.feed(p)
	}
	for {
		st, ok := b.search.Next()
		b.emitDecided() // what this Next decided, before more is measured
		if !ok {
			break
		}
		if err := b.measure(ctx, st); err != nil {
			return nil, err
		}
	}
	change := b.search.Change()
	if b.search.Nothing() {
		return nil, b.nothingToBisect(change)
	}

	// Each commit's runs over the whole bisection: an end or a probe
	// also ran beside later probes and in the confirmation.
	for i := range b.reported {
		pos := b.reported[i].Position
		b.reported[i].Measured, b.reported[i].Reused = b.probe(pos).measured, b.search.Reused(pos)
	}
	rep := &analysis.BisectReport{
		Repo: ws.Source(), Key: b.key, Order: order,
		Good: bisectCommit(good), Bad: bisectCommit(bad), Commits: n,
		Change: change, Probes: b.reported, Warnings: []string{},
	}
	lastGood, firstBad := b.commit(b.search.LastGood()), b.commit(b.search.FirstBad())
	rep.FirstBad, rep.LastGood = bisectCommit(firstBad), bisectCommit(lastGood)
	if cands := b.search.Candidates(); len(cands) > 1 || b.search.Stopped() {
		for _, pos := range cands {
			rep.Candidates = append(rep.Candidates, bisectCommit(b.commit(pos)))
		}
	}
	rep.Stopped = b.search.Stopped()
	var id int64
	if row, rounds, looks := b.search.Confirmation(); row != nil {
		comparison, inputs, err := b.compare(ctx, lastGood, firstBad, rounds, hist, looks)
		if err != nil {
			return nil, err
		}
		if id, err = b.save(ctx, lastGood, firstBad, comparison, inputs); err != nil {
			return nil, err
		}
		rep.Comparison, rep.Confirmation, rep.Confirmed = comparison, row, b.search.Confirmed()
	}
	rep.Reproduce = b.reproduce(good, bad, lastGood, firstBad)
	rep.Warnings = b.warnings(rep)
	res := &BisectResult{
		Report: rep, Range: commits, Good: good, Bad: bad, FirstBad: firstBad, LastGood: lastGood,
		Config: cfg, ConfigSource: source, ComparisonID: id,
	}
	res.Reused, res.Measured = rep.RunCounts()
	r.log().Info("bisect done", "first_bad", firstBad.Short(), "last_good", lastGood.Short(), "exact", rep.Exact(),
		"probes", len(rep.Probes)-2, "measured", res.Measured, "reused", res.Reused, "comparison", id)
	return res, nil
}

// bisection is one Bisect call's state.
type bisection struct {
	r             *Runner
	req           BisectRequest
	ws            *workspace.Workspace
	ss            *session
	cfg           *Config
	source        string // where cfg came from
	machine, hash string
	key           analysis.Key
	keyKnown      bool
	count         int // rounds a step needs
	maxCount      int // rounds an unsettled step may grow to
	opts          analysis.Options
	floor         analysis.Floor
	search        *analysis.BisectSearch
	// commits is good..bad, oldest first: position i (1 … n) is
	// commits[i−1], position 0 the good end.
	commits []workspace.Commit
	good    workspace.Commit
	probes  map[int]*probe
	// reported are the probes decided so far, as the report shows them.
	reported []analysis.Probe
	// benches are the indexes of the config's benchmarks that a round
	// runs: every one until a run shows which measure the key.
	benches   []int
	producers map[int]bool
}

// A probe is one commit the bisection measures: the side its runs are
// made on (nil until it needs one).
type probe struct {
	commit   workspace.Commit
	name     string // "good", "bad", "c7"
	position int    // in good..bad: 0 good end, len(range) bad end
	side     *side
	warmed   bool
	measured int
	fed      int // the side's runs given to the search so far
	// benchOf is, per measured run of side (its index in side.runs),
	// the config benchmark it ran.
	benchOf map[int]int
	// failure says why the commit could not be measured: its build
	// failed.
	failure string
}

// commit returns the commit at position pos of the range.
func (b *bisection) commit(pos int) workspace.Commit {
	if pos == 0 {
		return b.good
	}
	return b.commits[pos-1]
}

// probe returns the probe of position pos, made on first use.
func (b *bisection) probe(pos int) *probe {
	if p := b.probes[pos]; p != nil {
		return p
	}
	name := fmt.Sprintf("c%d", pos)
	switch pos {
	case 0:
		name = "good"
	case len(b.commits):
		name = "bad"
	}
	p := &probe{commit: b.commit(pos), name: name, position: pos}
	b.probes[pos] = p
	return p
}

// runValue returns an ok timed run's value of key: the median of its
// values, as analysis takes it.
func runValue(run analysis.Run, key analysis.Key) (float64, bool) {
	if run.Status != analysis.StatusOK || run.Tool != "" {
		return 0, false
	}
	var vs []float64
	for _, s := range run.Samples {
		if s.Key == key {
			vs = append(vs, s.Value)
		}
	}
	if len(vs) == 0 {
		return 0, false
	}
	slices.Sort(vs)
	if n := len(vs); n%2 == 0 {
		return (vs[n/2-1] + vs[n/2]) / 2, true
	}
	return vs[len(vs)/2], true
}

// feed gives the search the key's values of p's runs made since the
// last feed, each in its round.
func (b *bisection) feed(p *probe) {
	if p.side == nil {
		return
	}
	for ; p.fed < len(p.side.runs); p.fed++ {
		run := p.side.runs[p.fed]
		if v, ok := runValue(run, b.key); ok && run.Round > 0 {
			b.search.Record(p.position, analysis.RoundID{Round: run.Round}, v)
		}
	}
}

// emitDecided reports the probes the search decided since the last
// call, with their commits and run counts.
func (b *bisection) emitDecided() {
	decided := b.search.Probes()
	for _, pr := range decided[len(b.reported):] {
		p := b.probe(pr.Position)
		pr.Commit, pr.Measured, pr.Reused = bisectCommit(p.commit), p.measured, b.search.Reused(pr.Position)
		b.reported = append(b.reported, pr)
		b.emit(pr)
	}
}

func bisectCommit(c workspace.Commit) analysis.BisectCommit {
	return analysis.BisectCommit{SHA: c.SHA, Subject: c.Subject}
}

func (b *bisection) emit(p analysis.Probe) {
	log := b.r.log()
	if p.End != "" {
		log.Info("bisect end", "end", p.End, "sha", short(p.Commit.SHA), "median", p.Median, "runs", p.Runs, "reused", p.Reused, "measured", p.Measured)
	} else {
		log.Info("bisect probe", "step", p.Step, "sha", short(p.Commit.SHA), "at", p.Position, "class", p.Class,
			"uncertain", p.Uncertain, "median", p.Median, "runs", p.Runs, "reused", p.Reused, "measured", p.Measured, "reason", p.Reason)
	}
	if b.req.OnProbe != nil {
		b.req.OnProbe(p)
	}
}

// resolveKey settles the series: the request's benchmark, phase and
// unit, each defaulted from what the good end's runs (stored ones, else
// a first round of both ends measured now) measure: the phase is the
// config's headline (total), or, for a benchmark that measures no
// phases, its own value.
func (b *bisection) resolveKey(ctx context.Context, goodP, badP *probe) error {
	recs, err := b.r.Store.Runs(ctx, store.RunQuery{
		Repo: b.ws.Source(), Commits: []string{goodP.commit.SHA}, ConfigHash: b.hash, Machine: b.machine,
		Status: analysis.StatusOK, Limit: 20, Whole: true, Own: b.ss.id,
	})
	if err != nil {
		return fmt.Errorf("read stored runs of %s: %w", goodP.commit.Short(), err)
	}
	var runs []analysis.Run
	for _, rec := range recs {
		if rec.Tool == "" {
			runs = append(runs, rec.Run())
		}
	}
	if len(runs) == 0 {
		// Nothing stored: the ends' first round shows what they measure.
		b.ss.round = 1
		if err := b.measureRounds(ctx, []*probe{goodP, badP}, 1); err != nil {
			return err
		}
		if err := b.endFailure(goodP); err != nil {
			return err
		}
		runs = goodP.side.runs
	}
	key, err := pickKey(runs, b.req.Benchmark, b.req.Phase, cmp.Or(b.cfg.Thresholds.Headline, "total"), cmp.Or(b.req.Unit, "sec/op"), goodP.commit)
	if err != nil {
		return err
	}
	b.key, b.keyKnown = key, true
	b.narrow(goodP, badP)
	return nil
}

// pickKey returns the key of the one series the runs measure that the
// request names: benchmark ("" any), phase ("" the headline, or a
// benchmark's own value when it measures no phases) and unit.
func pickKey(runs []analysis.Run, benchmark, phase, headline, unit string, at workspace.Commit) (analysis.Key, error) {
	var seen []string
	has := map[string][]string{} // phase → benchmarks
	for _, run := range runs {
		if run.Status != analysis.StatusOK || run.Tool != "" {
			continue
		}
		for _, s := range run.Samples {
			if k := s.Key.String(); !slices.Contains(seen, k) {
				seen = append(seen, k)
			}
			if s.Unit == unit && (benchmark == "" || s.Benchmark == benchmark) && !slices.Contains(has[s.Phase], s.Benchmark) {
				has[s.Phase] = append(has[s.Phase], s.Benchmark)
			}
		}
	}
	want := phase
	if want == "" {
		want = headline
		if len(has[headline]) == 0 && len(has[""]) > 0 {
			want = "" // a benchmark without phases: its own value
		}
	}
	benches := has[want]
	named := fmt.Sprintf("phase %q", want)
	if want == "" {
		named = "value of its own (no phase)"
	}
	if benchmark != "" {
		named = fmt.Sprintf("benchmark %s with %s", benchmark, named)
	}
	switch len(benches) {
	case 1:
		return analysis.Key{Benchmark: benches[0], Phase: want, Unit: unit}, nil
	case 0:
		return analysis.Key{}, fmt.Errorf("%w: the runs of the good end %s measure no %s in %s; they measure %s: pass --benchmark, --phase and --unit of one of those",
			ErrUnknownSeries, at.Short(), named, unit, listSome(seen, 12))
	}
	return analysis.Key{}, fmt.Errorf("%w: several benchmarks measure %s in %s (%s): pick one with --benchmark",
		ErrUnknownSeries, named, unit, strings.Join(benches, ", "))
}

func listSome(items []string, n int) string {
	if len(items) == 0 {
		return "nothing"
	}
	if len(items) > n {
		return strings.Join(items[:n], ", ") + fmt.Sprintf(" and %d more", len(items)-n)
	}
	return strings.Join(items, ", ")
}

// loadStored gives the search the key's values in rounds stored by
// earlier sessions, of every commit of the range: they count wherever
// the commits a step compares all ran in one of them.
func (b *bisection) loadStored(ctx context.Context) error {
	shas := []string{b.good.SHA}
	for _, c := range b.commits {
		shas = append(shas, c.SHA)
	}
	vs, err := b.r.Store.RunValues(ctx, store.ValuesQuery{
		Repo: b.ws.Source(), Commits: shas, ConfigHash: b.hash, Machine: b.machine, Key: b.key, Own: b.ss.id,
	})
	if err != nil {
		return fmt.Errorf("read stored runs: %w", err)
	}
	for pos := 0; pos <= len(b.commits); pos++ {
		for _, v := range vs[b.commit(pos).SHA] {
			if v.SessionID != 0 && v.SessionID != b.ss.id && v.Round > 0 {
				b.search.Record(pos, analysis.RoundID{Session: v.SessionID, Round: v.Round}, v.Value)
			}
		}
	}
	return nil
}

// measure runs one step of the search: builds the commits not built yet
// (a build that fails is told to the search, which skips the commit),
// runs the warm-ups of those that had none, then the step's rounds,
// numbered as the search says, and gives the search the values.
func (b *bisection) measure(ctx context.Context, st analysis.BisectStep) error {
	var ps []*probe
	for _, pos := range st.Positions {
		ps = append(ps, b.probe(pos))
	}
	live, err := b.build(ctx, ps)
	if err != nil {
		return err
	}
	for k := range st.Rounds {
		b.ss.round = st.From + k
		if err := b.measureRounds(ctx, live, 1); err != nil {
			return err
		}
	}
	for _, p := range live {
		b.feed(p)
		if p.position == 0 || p.position == len(b.commits) {
			if err := b.endFailure(p); err != nil {
				return err
			}
			if err := b.hasSeries(p); err != nil {
				return err
			}
		}
	}
	return nil
}

// build builds the probes not built yet and returns those that built; a
// failed end is an error, a failed probe is told to the search.
func (b *bisection) build(ctx context.Context, ps []*probe) ([]*probe, error) {
	var live []*probe
	var fresh []*side
	for _, p := range ps {
		if p.side == nil {
			p.side = b.ss.newSide(p.name, p.commit, b.cfg)
			p.benchOf = map[int]int{}
			fresh = append(fresh, p.side)
		}
	}
	if len(fresh) > 0 {
		if err := b.ss.buildSides(ctx, fresh); err != nil {
			return nil, err
		}
	}
	for _, p := range ps {
		if p.side.build.Failed {
			p.failure = "build failed: " + p.side.build.Reason
			if p.position == 0 || p.position == len(b.commits) {
				return nil, b.endFailure(p)
			}
			if b.search != nil {
				b.search.Fail(p.position, p.failure)
			}
			continue
		}
		live = append(live, p)
	}
	return live, nil
}

// measureRounds builds the probes, runs the warm-ups of those that had
// none, then n interleaved rounds of the key's benchmarks on each, in
// the session's current round (the caller numbers the rounds).
func (b *bisection) measureRounds(ctx context.Context, ps []*probe, n int) error {
	live, err := b.build(ctx, ps)
	if err != nil {
		return err
	}
	var cold []*probe
	for _, p := range live {
		if !p.warmed {
			cold = append(cold, p)
			p.warmed = true
		}
	}
	warm := b.ss.warmup()
	b.ss.prog.grow(len(b.benches) * (len(cold)*warm + len(live)*n))
	if err := b.rounds(ctx, cold, warm, false); err != nil {
		return err
	}
	if err := b.rounds(ctx, live, n, true); err != nil {
		return err
	}
	b.narrow(live...)
	return nil
}

// rounds runs n rounds of the key's benchmarks, each round every probe
// once, in the config's order (random by default).
func (b *bisection) rounds(ctx context.Context, ps []*probe, n int, keep bool) error {
	sched := b.ss.sched
	if !keep {
		sched = b.ss.warm
	}
	sides := make([]*side, len(ps))
	of := make(map[*side]*probe, len(ps))
	for i, p := range ps {
		sides[i], of[p.side] = p.side, p
	}
	for range n {
		for _, i := range b.benches {
			for _, s := range sched.next(b.cfg.Benchmarks[i].Name, sides) {
				p := of[s]
				sched.record(p.name, keep)
				before := len(p.side.runs)
				if err := b.ss.runOnce(ctx, p.side, &p.side.cfg.Benchmarks[i], keep); err != nil {
					return err
				}
				if keep {
					p.measured++
					if len(p.side.runs) > before {
						p.benchOf[len(p.side.runs)-1] = i
					}
				}
			}
		}
	}
	return nil
}

// narrow keeps, once the key is known and a measured run has shown which
// of the config's benchmarks measure it, only those in later rounds.
func (b *bisection) narrow(ps ...*probe) {
	if !b.keyKnown {
		return
	}
	for _, p := range ps {
		if p.side == nil {
			continue
		}
		for j, i := range p.benchOf {
			if _, ok := runValue(p.side.runs[j], b.key); ok {
				b.producers[i] = true
			}
		}
	}
	if len(b.producers) > 0 && len(b.producers) < len(b.benches) {
		b.benches = b.benches[:0]
		for i := range b.cfg.Benchmarks {
			if b.producers[i] {
				b.benches = append(b.benches, i)
			}
		}
	}
}

// endFailure returns the error for an end that cannot be measured: its
// build failed, or none of its runs is ok.
func (b *bisection) endFailure(p *probe) error {
	if p.failure != "" {
		return fmt.Errorf("%w: the %s end %s (%s): %s\n%s", ErrEndFailed, p.name, p.commit.Short(), p.commit.Subject,
			p.failure, lastLines(p.side.build.Output, 10))
	}
	if p.side == nil {
		return nil
	}
	var failed []string
	ok := 0
	for _, run := range p.side.runs {
		if run.Status == analysis.StatusOK {
			ok++
		} else {
			failed = append(failed, string(run.Status)+": "+lastLines(run.Detail, 3))
		}
	}
	if ok == 0 && len(failed) > 0 {
		return fmt.Errorf("%w: no run of the %s end %s (%s) ended ok; the last: %s",
			ErrEndFailed, p.name, p.commit.Short(), p.commit.Subject, failed[len(failed)-1])
	}
	return nil
}

// hasSeries returns the error for an end whose ok runs lack the key.
func (b *bisection) hasSeries(p *probe) error {
	var seen []string
	okRuns := 0
	for _, run := range p.side.runs {
		if run.Status != analysis.StatusOK || run.Tool != "" {
			continue
		}
		okRuns++
		if _, ok := runValue(run, b.key); ok {
			return nil
		}
		for _, s := range run.Samples {
			if k := s.Key.String(); !slices.Contains(seen, k) {
				seen = append(seen, k)
			}
		}
	}
	if okRuns == 0 {
		return nil
	}
	return fmt.Errorf("%w: no run of the %s end %s measured %s; its runs measure %s: pass --benchmark, --phase and --unit of one of those",
		ErrUnknownSeries, p.name, p.commit.Short(), b.key, listSome(seen, 12))
}

// nothingToBisect is the error for ends that do not differ, with the
// numbers of their comparison.
func (b *bisection) nothingToBisect(row analysis.Row) error {
	good, bad := b.probe(0).commit, b.probe(len(b.commits)).commit
	hint := ""
	if row.NeedMoreRuns() {
		hint = fmt.Sprintf("More runs may settle it: raise --max-count (now %d). ", b.maxCount)
	}
	return fmt.Errorf("%w: good %s and bad %s do not differ in %s: %s, %s → %s, Δ %s at %.0f%% confidence (p=%.3g, floor %.1f%%, %d rounds beside each other). "+
		"%sCheck the series (--benchmark, --phase, --unit), or look at every series with perfbot compare --base %s --head %s",
		ErrNothingToBisect, good.Short(), bad.Short(), b.key, describeVerdict(row),
		formatNumber(row.BaseValue), formatNumber(row.HeadValue), analysis.FormatChange(row), 100*row.Confidence, row.PValue, row.Floor.Pct,
		row.Base.N, hint, good.Short(), bad.Short())
}

// compare compares every series of firstBad's runs against lastGood's,
// as Compare does, on the rounds in which the two ran beside each other
// (the search's confirmation: those of this session and stored ones),
// each round renumbered from 1 so that a paired row pairs them; it
// returns the report and its inputs, for save.
func (b *bisection) compare(ctx context.Context, lastGood, firstBad workspace.Commit, rounds []analysis.RoundID, hist map[analysis.Key][]float64, looks stats.Looks) (*analysis.Report, []byte, error) {
	index := make(map[analysis.RoundID]int, len(rounds))
	for i, r := range rounds {
		index[r] = i + 1
	}
	side := func(c workspace.Commit) ([]analysis.Run, []int64, error) {
		recs, err := b.r.Store.Runs(ctx, store.RunQuery{
			Repo: b.ws.Source(), Commits: []string{c.SHA}, ConfigHash: b.hash, Machine: b.machine, Status: analysis.StatusOK,
			Whole: true, Own: b.ss.id,
		})
		if err != nil {
			return nil, nil, fmt.Errorf("read stored runs of %s: %w", c.Short(), err)
		}
		var runs []analysis.Run
		var ids []int64
		for _, rec := range recs {
			id := analysis.RoundID{Session: rec.SessionID, Round: rec.Round}
			if rec.SessionID == b.ss.id {
				id.Session = 0
			}
			i, ok := index[id]
			if rec.Tool != "" || !ok {
				continue
			}
			run := rec.Run()
			run.Round = i
			runs, ids = append(runs, run), append(ids, rec.ID)
		}
		return runs, ids, nil
	}
	base, baseIDs, err := side(lastGood)
	if err != nil {
		return nil, nil, err
	}
	head, headIDs, err := side(firstBad)
	if err != nil {
		return nil, nil, err
	}
	env := analysisEnv(b.ss.env)
	rep := analysis.Compare(analysis.Input{
		BaseRev: lastGood.SHA, HeadRev: firstBad.SHA, Base: base, Head: head,
		History: hist, BaseEnv: env, HeadEnv: env, ConfigSource: b.source, ConfigPath: b.r.configPath(), Looks: looks,
	}, b.opts)
	inputs, _ := json.Marshal(map[string]any{
		"config_hash": b.hash, "machine": b.machine, "base_runs": nonNilIDs(baseIDs), "head_runs": nonNilIDs(headIDs),
		"bisect": map[string]any{"key": b.key, "all_commits": b.req.AllCommits, "rounds": len(rounds)},
	})
	return rep, inputs, nil
}

// save stores the comparison of firstBad against lastGood.
func (b *bisection) save(ctx context.Context, lastGood, firstBad workspace.Commit, rep *analysis.Report, inputs []byte) (int64, error) {
	var md bytes.Buffer
	if err := render.RenderMarkdown(&md, rep, render.RenderContext{}); err != nil {
		return 0, err
	}
	reportJSON, err := json.Marshal(rep)
	if err != nil {
		return 0, fmt.Errorf("encode report: %w", err)
	}
	if err := b.ss.begin(ctx); err != nil {
		return 0, fmt.Errorf("store comparison: %w", err)
	}
	id, err := b.r.Store.SaveComparison(ctx, &store.Comparison{
		Repo: b.ws.Source(), BaseSHA: lastGood.SHA, HeadSHA: firstBad.SHA, CreatedAt: time.Now(),
		Verdict: string(rep.Verdict), Inputs: string(inputs), Report: string(reportJSON), Markdown: md.String(),
		SessionID: b.ss.id,
	})
	if err != nil {
		return 0, fmt.Errorf("store comparison: %w", err)
	}
	return id, nil
}

func nonNilIDs(ids []int64) []int64 {
	if ids == nil {
		return []int64{}
	}
	return ids
}

// reproduce returns the commands that measure the found change again.
func (b *bisection) reproduce(good, bad, lastGood, firstBad workspace.Commit) []string {
	repo := render.FormatArgs([]string{b.ws.Source()})
	cmds := []string{fmt.Sprintf("perfbot compare --repo %s --base %s --head %s --count %d",
		repo, lastGood.SHA, firstBad.SHA, b.count)}
	bisect := fmt.Sprintf("perfbot bisect --repo %s --good %s --bad %s --benchmark %s", repo, good.SHA, bad.SHA, render.FormatArgs([]string{b.key.Benchmark}))
	if b.key.Phase != "" {
		// A benchmark without phases is bisected on its own value, which
		// no --phase names: the default picks it.
		bisect += " --phase " + render.FormatArgs([]string{b.key.Phase})
	}
	bisect += " --unit " + render.FormatArgs([]string{b.key.Unit})
	if b.req.AllCommits {
		bisect += " --all-commits"
	}
	// A config given from a file must be given again, or both commands
	// read the good end's .perfbot.yml, which may not exist.
	if b.r.Config != nil && b.r.Config.Path != "" {
		flag := " --config " + render.FormatArgs([]string{b.r.Config.Path})
		cmds[0] += flag
		bisect += flag
	}
	return append(cmds, bisect)
}

// warnings lists the report's caveats.
func (b *bisection) warnings(rep *analysis.BisectReport) []string {
	out := []string{}
	if sk := rep.Skipped(); len(sk) > 0 {
		var names []string
		for _, p := range sk {
			names = append(names, short(p.Commit.SHA))
		}
		what := fmt.Sprintf("%d commits were", len(sk))
		if len(sk) == 1 {
			what = "1 commit was"
		}
		out = append(out, fmt.Sprintf("%s skipped, as git bisect skips (a build failed, or no run measured the series): %s",
			what, strings.Join(names, ", ")))
		if len(rep.Candidates) > 1 && !rep.Stopped {
			out = append(out, fmt.Sprintf("Skipped commits leave a range: the first bad commit is one of %d; "+
				"fix their builds, or measure them with perfbot compare, to narrow it", len(rep.Candidates)))
		}
	}
	for _, p := range rep.Probes {
		if p.Uncertain {
			out = append(out, fmt.Sprintf("Step %d (%s) could not be placed: %s. The change is in one of the %d commits after %s up to %s; "+
				"raise --max-count (now %d) or quiet the machine to narrow it", p.Step, short(p.Commit.SHA), p.Reason,
				len(rep.Candidates), short(rep.LastGood.SHA), short(rep.FirstBad.SHA), b.maxCount))
		}
	}
	if row := rep.Confirmation; row != nil && !rep.Confirmed {
		out = append(out, fmt.Sprintf("Beside the last good commit, the first bad commit's %s is %s %s (%d rounds): not the change the ends showed, "+
			"so the answer is not confirmed: the change may be spread over several commits; check it with the Reproduce commands",
			rep.Key, describeVerdict(*row), analysis.FormatChange(*row), row.Base.N))
	}
	return append(out, b.ss.buildWarnings...)
}

// describeVerdict names a row's verdict with its reason.
func describeVerdict(row analysis.Row) string {
	if row.Reason != "" {
		return string(row.Verdict) + " (" + row.Reason + ")"
	}
	return string(row.Verdict)
}

// formatNumber prints a value with four significant digits.
func formatNumber(v float64) string { return fmt.Sprintf("%.4g", v) }

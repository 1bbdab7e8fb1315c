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
// commit as Compare reads it from the base.
//
// Every commit it measures, the two ends included, first reuses the runs
// the store has of it under the same config hash on this machine (of
// any kind: baselines, comparisons, earlier bisections), then gets only
// the runs it lacks up to Count, after warm-ups, stored as kind bisect
// (kept out of the baseline history). The ends are measured interleaved
// and compared first, with more runs while unsettled up to MaxCount; if
// they do not differ (a regression or an improvement, as compare judges
// it) the error wraps ErrNothingToBisect and gives the numbers.
//
// Each probe is then compared with both ends (analysis.Classify: the
// same test, floor and verdicts as compare, one series at a time). A
// probe that differs from one end and not the other is the other end's
// kind. One that looks like both or like neither gets batches of runs
// while that may settle it, up to MaxCount; after that it is taken for
// the end whose median its median is nearer, and the step is marked
// uncertain. A commit that does not build, or none of whose runs
// measured the series, is skipped as git bisect skips: the search tries
// the untested commit nearest the middle, and when only skipped commits
// lie between the last good and the first bad commit, the report gives
// them all as candidates.
//
// The probes run one commit at a time, not interleaved with the ends:
// on a machine whose speed drifts over the bisection a probe can look
// like the wrong end, which the comparison of the first bad commit
// against the last good one (stored, in Report.Comparison) checks.
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

	b := &bisection{r: r, req: req, ws: ws, cfg: cfg, source: source, producers: map[int]bool{}}
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
	b.batch = max(2, b.count/2)
	b.opts = r.optionsFor(cfg)
	for i := range cfg.Benchmarks {
		b.benches = append(b.benches, i)
	}
	b.ss.prog = newProgress(r.Progress, 0)
	b.ss.prog.observe = req.OnProgress
	defer b.ss.prog.finish()
	r.log().Info("bisect", "good", good.Short(), "bad", bad.Short(), "order", order, "commits", len(commits),
		"count", b.count, "max_count", b.maxCount, "order", cfg.Order, "seed", seed)

	goodP := &probe{commit: good, name: "good"}
	badP := &probe{commit: bad, name: "bad", position: len(commits)}
	ends := []*probe{goodP, badP}
	probes := map[string]*probe{good.SHA: goodP, bad.SHA: badP}
	if err := b.resolveKey(ctx, goodP, badP); err != nil {
		return nil, err
	}
	hist, err := r.Store.History(ctx, store.HistoryQuery{Repo: ws.Source(), Machine: b.machine, ConfigHash: b.hash, Limit: 100})
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	b.floor = analysis.NoiseFloor(hist[b.key], b.opts)
	change, err := b.measureEnds(ctx, goodP, badP)
	if err != nil {
		return nil, err
	}
	goodVals, badVals := goodP.values(b.key), badP.values(b.key)

	rep := &analysis.BisectReport{
		Repo: ws.Source(), Key: b.key, Order: order,
		Good: bisectCommit(good), Bad: bisectCommit(bad), Commits: len(commits),
		Change: change, Warnings: []string{},
	}
	for _, p := range ends {
		pr := p.report(b.key)
		rep.Probes = append(rep.Probes, pr)
		b.emit(pr)
	}

	search := analysis.NewBisection(len(commits))
	var uncertain []analysis.Probe
	for step := 1; ; step++ {
		i, ok := search.Next()
		if !ok {
			break
		}
		p := &probe{commit: commits[i], name: fmt.Sprintf("probe %d", step), position: i + 1, step: step}
		probes[p.commit.SHA] = p
		pr, err := b.probe(ctx, p, goodVals, badVals)
		if err != nil {
			return nil, err
		}
		if err := search.Mark(i, pr.Class); err != nil {
			return nil, err
		}
		if pr.Uncertain {
			uncertain = append(uncertain, pr)
		}
		rep.Probes = append(rep.Probes, pr)
		b.emit(pr)
	}

	lastGood := good
	if i := search.LastGood(); i >= 0 {
		lastGood = commits[i]
	}
	firstBad := commits[search.FirstBad()]
	rep.FirstBad, rep.LastGood = bisectCommit(firstBad), bisectCommit(lastGood)
	if cands := search.Candidates(); len(cands) > 1 {
		for _, i := range cands {
			rep.Candidates = append(rep.Candidates, bisectCommit(commits[i]))
		}
	}
	comparison, id, err := b.confirm(ctx, probes[lastGood.SHA], probes[firstBad.SHA], hist)
	if err != nil {
		return nil, err
	}
	rep.Comparison = comparison
	// The confirmation may have measured the two neighbours further: their
	// entries count those runs too.
	for i, pr := range rep.Probes {
		if sha := pr.Commit.SHA; sha == lastGood.SHA || sha == firstBad.SHA {
			rep.Probes[i] = probes[sha].report(b.key)
		}
	}
	rep.Reproduce = b.reproduce(good, bad, lastGood, firstBad)
	rep.Warnings = b.warnings(rep, uncertain)
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
	count         int // runs a commit needs
	maxCount      int // runs an unsettled commit may grow to
	batch         int // runs added at a time to an unsettled commit
	opts          analysis.Options
	floor         analysis.Floor
	// benches are the indexes of the config's benchmarks that a round
	// runs: every one until a run shows which measure the key.
	benches   []int
	producers map[int]bool
}

// A probe is one commit the bisection measures: the runs it reused and
// the side its new runs are made on (nil until it needs one).
type probe struct {
	commit   workspace.Commit
	name     string // "good", "bad", "probe 3"
	position int    // in good..bad: 0 good end, len(range) bad end
	step     int
	side     *side
	stored   []float64 // the key's values in reused runs, oldest first
	warmed   bool
	measured int
	// benchOf is, per measured run of side (its index in side.runs),
	// the config benchmark it ran.
	benchOf map[int]int
	// failure says why the commit could not be measured: its build
	// failed.
	failure   string
	uncertain bool
	reason    string
	class     analysis.ProbeClass
	vsGood    *analysis.Row
	vsBad     *analysis.Row
}

// values returns the commit's values of key: the reused ones, then one
// per ok measured run that measured it.
func (p *probe) values(key analysis.Key) []float64 {
	out := slices.Clone(p.stored)
	if p.side != nil {
		for _, run := range p.side.runs {
			if v, ok := runValue(run, key); ok {
				out = append(out, v)
			}
		}
	}
	return out
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

// report returns the probe as the report shows it.
func (p *probe) report(key analysis.Key) analysis.Probe {
	vals := p.values(key)
	out := analysis.Probe{
		Step: p.step, Commit: bisectCommit(p.commit), Position: p.position, Class: p.class,
		Uncertain: p.uncertain, Reason: p.reason, Runs: len(vals),
		Reused: len(p.stored), Measured: p.measured, VsGood: p.vsGood, VsBad: p.vsBad,
	}
	switch p.name {
	case "good":
		out.End, out.Class = "good", analysis.ProbeGood
	case "bad":
		out.End, out.Class = "bad", analysis.ProbeBad
	}
	if len(vals) > 0 {
		slices.Sort(vals)
		out.Median = vals[len(vals)/2]
		if len(vals)%2 == 0 {
			out.Median = (vals[len(vals)/2-1] + vals[len(vals)/2]) / 2
		}
	}
	return out
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

// resolveKey settles the series: the request's benchmark, or the one
// benchmark that the good end's runs (stored ones, else a first round
// measured now) have the phase and unit of.
func (b *bisection) resolveKey(ctx context.Context, goodP, badP *probe) error {
	phase, unit := cmp.Or(b.req.Phase, "total"), cmp.Or(b.req.Unit, "sec/op")
	if b.req.Benchmark != "" {
		b.key, b.keyKnown = analysis.Key{Benchmark: b.req.Benchmark, Phase: phase, Unit: unit}, true
		return b.loadStored(ctx, goodP, badP)
	}
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
		if err := b.measure(ctx, []*probe{goodP, badP}, 1); err != nil {
			return err
		}
		if err := b.endFailure(goodP); err != nil {
			return err
		}
		runs = goodP.side.runs
	}
	key, err := pickKey(runs, phase, unit, goodP.commit)
	if err != nil {
		return err
	}
	b.key, b.keyKnown = key, true
	b.narrow(goodP, badP)
	return b.loadStored(ctx, goodP, badP)
}

// pickKey returns the one benchmark's key whose phase and unit runs
// measure.
func pickKey(runs []analysis.Run, phase, unit string, at workspace.Commit) (analysis.Key, error) {
	var benches, seen []string
	for _, run := range runs {
		if run.Status != analysis.StatusOK || run.Tool != "" {
			continue
		}
		for _, s := range run.Samples {
			if s.Phase == phase && s.Unit == unit && !slices.Contains(benches, s.Benchmark) {
				benches = append(benches, s.Benchmark)
			}
			if k := s.Key.String(); !slices.Contains(seen, k) {
				seen = append(seen, k)
			}
		}
	}
	switch len(benches) {
	case 1:
		return analysis.Key{Benchmark: benches[0], Phase: phase, Unit: unit}, nil
	case 0:
		return analysis.Key{}, fmt.Errorf("%w: the runs of the good end %s measure no phase %q in %s; they measure %s: pass --phase and --unit (and --benchmark) of one of those",
			ErrUnknownSeries, at.Short(), phase, unit, listSome(seen, 12))
	}
	return analysis.Key{}, fmt.Errorf("%w: several benchmarks measure phase %q in %s (%s): pick one with --benchmark",
		ErrUnknownSeries, phase, unit, strings.Join(benches, ", "))
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

// loadStored reads each probe's stored values of the key, leaving out
// the runs this bisection made of it: the newest MaxCount of them.
func (b *bisection) loadStored(ctx context.Context, ps ...*probe) error {
	shas := make([]string, len(ps))
	for i, p := range ps {
		shas[i] = p.commit.SHA
	}
	vs, err := b.r.Store.RunValues(ctx, store.ValuesQuery{
		Repo: b.ws.Source(), Commits: shas, ConfigHash: b.hash, Machine: b.machine, Key: b.key, Own: b.ss.id,
	})
	if err != nil {
		return fmt.Errorf("read stored runs: %w", err)
	}
	for _, p := range ps {
		var own []int64
		if p.side != nil {
			own = p.side.ids
		}
		p.stored = nil
		for _, v := range vs[p.commit.SHA] {
			if !slices.Contains(own, v.RunID) {
				p.stored = append(p.stored, v.Value)
			}
		}
		if len(p.stored) > b.maxCount {
			p.stored = p.stored[len(p.stored)-b.maxCount:]
		}
	}
	return nil
}

// measure builds the probes not built yet, runs the warm-ups of those
// that had none, then n interleaved rounds of the key's benchmarks on
// each. A probe whose build fails is left out, its failure noted (and
// stored as a build-failed run).
func (b *bisection) measure(ctx context.Context, ps []*probe, n int) error {
	var live []*probe
	for _, p := range ps {
		if p.side == nil {
			p.side = b.ss.newSide(p.name, p.commit, b.cfg)
			p.benchOf = map[int]int{}
			if err := b.ss.build(ctx, p.side); err != nil {
				return err
			}
		}
		if p.side.build.Failed {
			p.failure = "build failed: " + p.side.build.Reason
			continue
		}
		live = append(live, p)
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
	b.narrow(ps...)
	return nil
}

// rounds runs n rounds of the key's benchmarks, each round every probe
// once, in the config's order (the ends, measured together, in a random
// order by default).
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

// fill measures each probe, one interleaved round at a time, until it
// has target values or has had target − (its values) more runs.
func (b *bisection) fill(ctx context.Context, ps []*probe, target int) error {
	left := map[*probe]int{}
	for _, p := range ps {
		left[p] = target - len(p.values(b.key))
	}
	for {
		var need []*probe
		for _, p := range ps {
			if left[p] > 0 && p.failure == "" && len(p.values(b.key)) < target {
				need = append(need, p)
				left[p]--
			}
		}
		if len(need) == 0 {
			return nil
		}
		if err := b.measure(ctx, need, 1); err != nil {
			return err
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

// measureEnds gives both ends Count values (interleaved), then more while
// their comparison is unsettled, up to MaxCount, and returns the bad
// end's comparison against the good end's. The error wraps
// ErrNothingToBisect when they do not differ.
func (b *bisection) measureEnds(ctx context.Context, goodP, badP *probe) (analysis.Row, error) {
	ends := []*probe{goodP, badP}
	check := func() error {
		for _, p := range ends {
			if err := b.endFailure(p); err != nil {
				return err
			}
			if len(p.values(b.key)) == 0 {
				return b.noSeries(p)
			}
		}
		return nil
	}
	// One round first, unless the store had values: a series the runs
	// do not measure is said after one run rather than Count.
	if len(goodP.values(b.key)) == 0 || len(badP.values(b.key)) == 0 {
		if err := b.fill(ctx, ends, 1); err != nil {
			return analysis.Row{}, err
		}
		if err := check(); err != nil {
			return analysis.Row{}, err
		}
	}
	if err := b.fill(ctx, ends, b.count); err != nil {
		return analysis.Row{}, err
	}
	if err := check(); err != nil {
		return analysis.Row{}, err
	}
	// The looks at the ends: each comparison of them tests at its look's
	// sequential threshold, so adding runs keeps α.
	looks := analysis.Looks{Max: b.maxCount}
	compareEnds := func() analysis.Row {
		looks.Runs = append(looks.Runs, min(len(goodP.values(b.key)), len(badP.values(b.key))))
		return analysis.CompareSeries(b.key, goodP.values(b.key), badP.values(b.key), b.floor, b.opts, looks)
	}
	row := compareEnds()
	for row.NeedMoreRuns() {
		n := min(len(goodP.values(b.key)), len(badP.values(b.key)))
		if n >= b.maxCount {
			break
		}
		b.r.log().Info("ends unsettled: adding runs", "rounds", min(b.batch, b.maxCount-n), "so_far", n, "cap", b.maxCount)
		if err := b.fill(ctx, ends, min(b.maxCount, n+b.batch)); err != nil {
			return analysis.Row{}, err
		}
		if min(len(goodP.values(b.key)), len(badP.values(b.key))) == n {
			break // the runs failed: no more values
		}
		row = compareEnds()
	}
	if !row.Changed() {
		hint := ""
		if row.NeedMoreRuns() {
			hint = fmt.Sprintf("More runs may settle it: raise --max-count (now %d). ", b.maxCount)
		}
		return row, fmt.Errorf("%w: good %s and bad %s do not differ in %s: %s (%s → %s, %+.1f%%, p=%.3g, floor %.1f%%, %d and %d runs). "+
			"%sCheck the series (--benchmark, --phase, --unit), or look at every series with perfbot compare --base %s --head %s",
			ErrNothingToBisect, goodP.commit.Short(), badP.commit.Short(), b.key, describeVerdict(row),
			formatNumber(row.BaseValue), formatNumber(row.HeadValue), row.Change(), row.PValue, row.Floor.Pct,
			row.Base.N, row.Head.N, hint, goodP.commit.Short(), badP.commit.Short())
	}
	return row, nil
}

// noSeries is the error for an end whose ok runs lack the key.
func (b *bisection) noSeries(p *probe) error {
	var runs []analysis.Run
	if p.side != nil {
		runs = p.side.runs
	}
	var seen []string
	for _, run := range runs {
		for _, s := range run.Samples {
			if k := s.Key.String(); !slices.Contains(seen, k) {
				seen = append(seen, k)
			}
		}
	}
	return fmt.Errorf("%w: no run of the %s end %s measured %s; its runs measure %s: pass --benchmark, --phase and --unit of one of those",
		ErrUnknownSeries, p.name, p.commit.Short(), b.key, listSome(seen, 12))
}

// probe measures one commit of the range and decides what it is.
func (b *bisection) probe(ctx context.Context, p *probe, goodVals, badVals []float64) (analysis.Probe, error) {
	if err := b.loadStored(ctx, p); err != nil {
		return analysis.Probe{}, err
	}
	if err := b.fill(ctx, []*probe{p}, b.count); err != nil {
		return analysis.Probe{}, err
	}
	vals := p.values(b.key)
	if len(vals) == 0 {
		p.class, p.reason = analysis.ProbeSkipped, cmp.Or(p.failure, b.runsFailed(p))
		return p.report(b.key), nil
	}
	// The probe's looks: it is compared with the ends at each, at its
	// look's sequential threshold.
	looks := analysis.Looks{Runs: []int{len(vals)}, Max: b.maxCount}
	cl := analysis.Classify(b.key, goodVals, badVals, vals, b.floor, b.opts, looks)
	for cl.Class == analysis.ProbeUnclear && cl.NeedMoreRuns && len(vals) < b.maxCount && p.failure == "" {
		b.r.log().Info("probe unsettled: adding runs", "sha", p.commit.Short(), "so_far", len(vals), "cap", b.maxCount,
			"vs_good", describeVerdict(cl.VsGood), "vs_bad", describeVerdict(cl.VsBad))
		if err := b.fill(ctx, []*probe{p}, min(b.maxCount, len(vals)+b.batch)); err != nil {
			return analysis.Probe{}, err
		}
		if n := len(p.values(b.key)); n == len(vals) {
			break
		}
		vals = p.values(b.key)
		looks.Runs = append(looks.Runs, len(vals))
		cl = analysis.Classify(b.key, goodVals, badVals, vals, b.floor, b.opts, looks)
	}
	p.class, p.vsGood, p.vsBad = cl.Class, &cl.VsGood, &cl.VsBad
	if cl.Class == analysis.ProbeUnclear {
		p.class, p.uncertain = cl.Nearer, true
		p.reason = fmt.Sprintf("at %d runs, against good %s and against bad %s; its median is nearer the %s end's",
			len(vals), describeVerdict(cl.VsGood), describeVerdict(cl.VsBad), cl.Nearer)
	}
	return p.report(b.key), nil
}

// runsFailed says why a built probe has no value.
func (b *bisection) runsFailed(p *probe) string {
	counts := map[analysis.Status]int{}
	if p.side != nil {
		for _, run := range p.side.runs {
			counts[run.Status]++
		}
	}
	var parts []string
	for _, st := range analysis.Statuses {
		if counts[st] > 0 {
			parts = append(parts, fmt.Sprintf("%s: %d", st, counts[st]))
		}
	}
	if len(parts) == 0 {
		return "no run measured " + b.key.String()
	}
	return fmt.Sprintf("no run measured %s (%s)", b.key, strings.Join(parts, ", "))
}

// confirm compares the first bad commit with the last good one, as
// Compare does, and stores the comparison. While the searched series is
// unsettled in it (the probes classed each commit against the ends; this
// is the two neighbours' own test) both get more interleaved rounds, a
// batch at a time up to the cap, and each look tests at its share of α,
// as Compare's do: one slow run of six must not leave the bisection's
// answer "inconclusive" where more runs would settle it.
func (b *bisection) confirm(ctx context.Context, lastGood, firstBad *probe, hist map[analysis.Key][]float64) (*analysis.Report, int64, error) {
	pair := []*probe{lastGood, firstBad}
	runs := func() int { return min(len(lastGood.values(b.key)), len(firstBad.values(b.key))) }
	var looks []int
	for {
		n := runs()
		looks = append(looks, n)
		rep, inputs, err := b.compare(ctx, lastGood.commit, firstBad.commit, hist, analysis.Looks{Runs: looks, Max: max(b.maxCount, n)})
		if err != nil {
			return nil, 0, err
		}
		settled := true
		for _, row := range rep.Phases {
			if row.Key == b.key && row.NeedMoreRuns() {
				settled = false
			}
		}
		if !settled && n < b.maxCount {
			b.r.log().Info("first bad against last good unsettled: adding runs", "rounds", min(b.batch, b.maxCount-n), "so_far", n, "cap", b.maxCount)
			if err := b.fill(ctx, pair, min(b.maxCount, n+b.batch)); err != nil {
				return nil, 0, err
			}
			if runs() > n {
				continue
			}
		}
		id, err := b.save(ctx, lastGood.commit, firstBad.commit, rep, inputs)
		return rep, id, err
	}
}

// compare compares every series of firstBad's stored runs against
// lastGood's, as Compare does, at the looks so far; it returns the
// report and its inputs, for save.
func (b *bisection) compare(ctx context.Context, lastGood, firstBad workspace.Commit, hist map[analysis.Key][]float64, looks analysis.Looks) (*analysis.Report, []byte, error) {
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
			if rec.Tool == "" {
				runs, ids = append(runs, rec.Run()), append(ids, rec.ID)
			}
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
		"bisect": map[string]any{"key": b.key, "all_commits": b.req.AllCommits},
	})
	return rep, inputs, nil
}

// save stores the comparison of firstBad against lastGood.
func (b *bisection) save(ctx context.Context, lastGood, firstBad workspace.Commit, rep *analysis.Report, inputs []byte) (int64, error) {
	var md bytes.Buffer
	if err := analysis.RenderMarkdown(&md, rep, analysis.RenderContext{}); err != nil {
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
	repo := analysis.FormatArgs([]string{b.ws.Source()})
	cmds := []string{fmt.Sprintf("perfbot compare --repo %s --base %s --head %s --count %d",
		repo, lastGood.SHA, firstBad.SHA, b.count)}
	bisect := fmt.Sprintf("perfbot bisect --repo %s --good %s --bad %s --benchmark %s --phase %s --unit %s",
		repo, good.SHA, bad.SHA, analysis.FormatArgs([]string{b.key.Benchmark}),
		analysis.FormatArgs([]string{b.key.Phase}), analysis.FormatArgs([]string{b.key.Unit}))
	if b.req.AllCommits {
		bisect += " --all-commits"
	}
	// A config given from a file must be given again, or both commands
	// read the good end's .perfbot.yml, which may not exist.
	if b.r.Config != nil && b.r.Config.Path != "" {
		flag := " --config " + analysis.FormatArgs([]string{b.r.Config.Path})
		cmds[0] += flag
		bisect += flag
	}
	return append(cmds, bisect)
}

// warnings lists the report's caveats.
func (b *bisection) warnings(rep *analysis.BisectReport, uncertain []analysis.Probe) []string {
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
	}
	if !rep.Exact() {
		out = append(out, fmt.Sprintf("Skipped commits leave a range: the first bad commit is one of %d; "+
			"fix their builds, or measure them with perfbot compare, to narrow it", len(rep.Candidates)))
	}
	for _, p := range uncertain {
		out = append(out, fmt.Sprintf("Step %d (%s) is uncertain: %s; check it with perfbot compare", p.Step, short(p.Commit.SHA), p.Reason))
	}
	if c := rep.Comparison; c != nil {
		found := false
		for _, row := range c.Phases {
			if row.Key == rep.Key && !row.Simulated {
				found = true
				if !row.Changed() {
					out = append(out, fmt.Sprintf("Against the last good commit alone the first bad commit's %s is %s: the change may be spread over several commits, or the machine drifted during the bisection",
						rep.Key, describeVerdict(row)))
				}
			}
		}
		if !found {
			out = append(out, fmt.Sprintf("The comparison of the first bad commit against the last good one has no row for %s", rep.Key))
		}
	}
	return out
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

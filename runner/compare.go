package runner

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/analysis/stats"
	"github.com/perfbot/perfbot/runner/execute"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/store"
)

// A CompareRequest asks for head to be compared against base.
type CompareRequest struct {
	Source     string // repository path or clone URL
	Base, Head string // any git revisions
	// Count and MaxCount override the config's measured runs per side and
	// the cap that inconclusive comparisons may grow to; 0 keeps the
	// config's values.
	Count, MaxCount int
	// BaseArgs and HeadArgs are variant arguments, appended to every
	// benchmark's arguments on the base and on the head side (see
	// Config.WithVariant); nil for none. With Base and Head one revision
	// they make an A/B comparison of two flag sets in one build; equal
	// args on one revision leave nothing to compare (ErrNothingToCompare).
	// Each side's runs are stored with its variant's config and config
	// hash, and its noise floors come from the base variant's history.
	BaseArgs, HeadArgs []string
	// Kind is what the runs are stored as: store.KindCompare unless set
	// (calibration stores store.KindCalibrate).
	Kind store.Kind
	// PR is the pull request the comparison is for, stored with it (0:
	// none).
	PR int
	// Seed seeds the order of the sides within rounds (the config's
	// order: random); 0 picks a new one. The seed is stored with the
	// comparison and printed in its report, so giving it again (perfbot
	// compare --seed) replays the order.
	Seed uint64
	// OnProgress, when set, is called after every run (warm-ups
	// included), from the goroutine that called Compare.
	OnProgress func(Progress)
	// Timeout, when set, is the time the whole comparison has (a bot
	// job's limit, compare --timeout). Compare refuses, before building,
	// a count or a cap whose runs cannot end within it by this machine's
	// stored runs of the config (ErrUnreachable); and again, once the
	// builds and the warm-up rounds are done and before any run is
	// stored, by the time those took: so a timeout that cannot hold the
	// comparison is refused having stored nothing, also without history.
	Timeout time.Duration
}

// ErrUnreachable is wrapped by Compare's error for a count or a cap of
// runs that the comparison's Timeout cannot hold.
var ErrUnreachable = errors.New("cannot be reached in the time given")

// A CompareResult is a finished comparison.
type CompareResult struct {
	Report       *analysis.Report
	Markdown     string // the report rendered for a pull request
	ComparisonID int64
	Base, Head   workspace.Commit
	Config       *Config
	ConfigSource string // where the config came from (see LoadConfig)
	Rounds       int    // measured runs per side and benchmark
	// Looks are the rounds at each look of the sequential design, the
	// last equal to Rounds (none when a build failed).
	Looks []int
	// Seed is the seed of the sides' order (CompareRequest.Seed), and
	// Schedule the side ("base" or "head") of every measured run, in the
	// order they ran.
	Seed       uint64
	Schedule   []string
	FailedRuns int // timed runs that did not end ok (builds included)
	// FailedSimulations counts the callgrind runs (Benchmark.Callgrind)
	// that did not end ok; the report warns of them, and the timed
	// comparison stands without them.
	FailedSimulations int
	// BaseRuns and HeadRuns are the measured runs, in the order they ran,
	// each with the profiles it wrote (see Benchmark.CPUProfile): those
	// that the report's analysis.Input had.
	BaseRuns, HeadRuns []analysis.Run
}

// ErrNothingToCompare is wrapped by Compare's error for variant args that
// are the same on both sides of one revision.
var ErrNothingToCompare = errors.New("nothing to compare")

// Compare builds base and head (a revision once, however many sides run
// it), runs warm-ups that are thrown away, then Count interleaved rounds,
// each running the sides in the config's order (random by default,
// seeded by Seed), storing every run. While the report says more runs
// could settle it, it adds batches of rounds up to MaxCount: a
// group-sequential design whose looks share α (stats.Design), so that
// adding runs never raises the false-alarm rate. The config comes from
// the base revision, so a change cannot alter how it is measured;
// BaseArgs and HeadArgs make a variant of it for each side.
func (r *Runner) Compare(ctx context.Context, req CompareRequest) (*CompareResult, error) {
	ws, err := r.open(ctx, req.Source)
	if err != nil {
		return nil, err
	}
	base, err := resolve(ctx, ws, "base", req.Base)
	if err != nil {
		return nil, err
	}
	head, err := resolve(ctx, ws, "head", req.Head)
	if err != nil {
		return nil, err
	}
	variants := len(req.BaseArgs) > 0 || len(req.HeadArgs) > 0
	if variants && base.SHA == head.SHA && slices.Equal(req.BaseArgs, req.HeadArgs) {
		return nil, fmt.Errorf("%w: base and head are both %s with args %s; give each side its own args",
			ErrNothingToCompare, base.Short(), render.FormatArgs(req.BaseArgs))
	}
	cfg, source, err := r.loadConfig(ctx, ws, base.SHA)
	if err != nil {
		return nil, err
	}
	r.log().Info("config", "source", source, "hash", cfg.Hash()[:12])
	if err := checkValgrind(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	baseCfg, err := cfg.WithVariant(req.BaseArgs)
	if err != nil {
		return nil, fmt.Errorf("%s: base %w", source, err)
	}
	headCfg, err := cfg.WithVariant(req.HeadArgs)
	if err != nil {
		return nil, fmt.Errorf("%s: head %w", source, err)
	}
	kind := req.Kind
	if kind == "" {
		kind = store.KindCompare
	}
	ss, err := r.newSession(ctx, ws, cfg, kind)
	if err != nil {
		return nil, err
	}
	defer ss.end(ctx)
	count := ss.count(req.Count)
	maxCount := max(count, ss.cfg.MaxCount)
	if req.MaxCount > 0 {
		maxCount = max(count, req.MaxCount)
	}
	sides := []*side{ss.newSide("base", base, baseCfg), ss.newSide("head", head, headCfg)}
	if variants {
		r.log().Info("variants", "base_args", render.FormatArgs(req.BaseArgs), "base_config_hash", sides[0].cfgHash[:12],
			"head_args", render.FormatArgs(req.HeadArgs), "head_config_hash", sides[1].cfgHash[:12])
	}
	var deadline time.Time
	if req.Timeout > 0 {
		deadline = time.Now().Add(req.Timeout)
		if d, ok := ctx.Deadline(); ok && d.Before(deadline) {
			deadline = d
		}
		if err := r.checkReachable(ctx, ws, ss, sides, count, maxCount, req.Timeout); err != nil {
			return nil, err
		}
	}
	if r.Progress != nil {
		fmt.Fprintln(r.Progress, comparePlan(base, head, source, cfg, ss.warmup(), count, maxCount))
	}
	if err := ss.buildSides(ctx, sides); err != nil {
		return nil, err
	}
	seed := ss.seed(req.Seed)
	r.log().Info("order", "order", cfg.Order, "seed", seed)
	// The noise floors are the base variant's: its config hash is the
	// config's own unless base has variant args.
	hist, err := r.Store.History(ctx, store.HistoryQuery{
		Repo: ws.Source(), Machine: ss.env.ID(), ConfigHash: sides[0].cfgHash, Limit: 100,
	})
	if err != nil {
		return nil, fmt.Errorf("read history: %w", err)
	}
	opts := r.optionsFor(cfg)
	env := analysisEnv(ss.env)
	design := stats.NewDesign(count, maxCount)
	var looks []int
	var caveats []string
	var loadInputs map[string]any
	compare := func() *analysis.Report {
		return analysis.Compare(analysis.Input{
			BaseRev: base.SHA, HeadRev: head.SHA,
			BaseArgs: req.BaseArgs, HeadArgs: req.HeadArgs,
			Base: sides[0].runs, Head: sides[1].runs,
			History: hist, BaseEnv: env, HeadEnv: env,
			Looks: stats.Looks{Runs: looks, Max: design.Max},
			Order: cfg.Order, Seed: seed, Caveats: append(slices.Clone(ss.buildWarnings), caveats...), ConfigSource: source, ConfigPath: r.configPath(),
		}, opts)
	}

	// A side that does not build leaves nothing to compare: run nothing,
	// and report the build failure as what it is.
	buildFailed := sides[0].build.Failed || sides[1].build.Failed
	var report *analysis.Report
	rounds := 0
	if !buildFailed {
		warm := ss.warmup()
		ss.prog = newProgress(r.Progress, len(cfg.Benchmarks)*len(sides)*(warm+count))
		ss.prog.most = len(cfg.Benchmarks) * len(sides) * (warm + design.Max)
		ss.prog.observe = req.OnProgress
		meter := r.startLoad(ctx)
		defer meter.close()
		warmStart := time.Now()
		if err := ss.rounds(ctx, sides, warm, false); err != nil {
			return nil, err
		}
		if !deadline.IsZero() && warm > 0 {
			// Nothing is stored yet: the warm-up rounds just timed say
			// whether the measured ones fit the time that is left.
			round := time.Since(warmStart) / time.Duration(warm)
			spent := "after the builds and " + warmRounds(warm)
			if err := checkFits(req.Timeout, time.Until(deadline), round, spent, "a warm-up round of both sides just took", count, maxCount); err != nil {
				meter.stop()
				return nil, err
			}
		}
		// Sequential testing: Count rounds, then batches while the report
		// is unsettled, up to the cap; every look tests at its share of α
		// (stats.Design), so the looks together keep it.
		_, err = design.Run(func(n int) error {
			if rounds > 0 {
				r.log().Info("inconclusive: adding runs", "rounds", n, "so_far", rounds, "cap", design.Max)
				ss.prog.grow(len(cfg.Benchmarks) * len(sides) * n)
			}
			if err := ss.rounds(ctx, sides, n, true); err != nil {
				return err
			}
			rounds += n
			return nil
		}, func(l []int) (bool, error) {
			looks = l
			report = compare()
			return !report.NeedMoreRuns(), nil
		})
		if err != nil {
			return nil, err
		}
		caveats, loadInputs = meter.stop()
		ss.closeResidents() // the timed runs are over: free their GPU memory
		// The callgrind runs come last: their counts do not need the timed
		// runs' statistics, and their time limit is made from the timed runs.
		ss.prog.grow(ss.countSimulations(sides))
		if _, err := ss.simulate(ctx, sides); err != nil {
			return nil, err
		}
	}
	// The last report again, with the load caveats and the callgrind runs.
	report = compare()
	ss.prog.finish()

	var md bytes.Buffer
	if err := render.RenderMarkdown(&md, report, render.RenderContext{Repo: req.Source}); err != nil {
		return nil, err
	}
	reportJSON, err := json.Marshal(report)
	if err != nil {
		return nil, fmt.Errorf("encode report: %w", err)
	}
	in := map[string]any{
		"config_hash": cfg.Hash(), "config_source": source, "rounds": rounds,
		"base_runs": sides[0].ids, "head_runs": sides[1].ids, "machine": ss.env.ID(),
		"order": cfg.Order, "seed": strconv.FormatUint(seed, 10), "looks": nonNilInts(looks),
		"schedule": nonNilStrings(ss.sched.schedule()),
	}
	if variants {
		in["base_args"], in["head_args"] = nonNil(req.BaseArgs), nonNil(req.HeadArgs)
		in["base_config_hash"], in["head_config_hash"] = sides[0].cfgHash, sides[1].cfgHash
	}
	inputs, err := marshalInputs(in, loadInputs)
	if err != nil {
		return nil, fmt.Errorf("encode comparison inputs: %w", err)
	}
	if err := ss.begin(ctx); err != nil {
		return nil, fmt.Errorf("store comparison: %w", err)
	}
	id, err := r.Store.SaveComparison(ctx, &store.Comparison{
		Repo: ws.Source(), BaseSHA: base.SHA, HeadSHA: head.SHA, CreatedAt: time.Now(),
		Verdict: string(report.Verdict), Inputs: string(inputs), Report: string(reportJSON),
		Markdown: md.String(), SessionID: ss.id, PR: req.PR,
	})
	if err != nil {
		return nil, fmt.Errorf("store comparison: %w", err)
	}
	return &CompareResult{
		Report: report, Markdown: md.String(), ComparisonID: id,
		Base: base, Head: head, Config: cfg, ConfigSource: source,
		Rounds: rounds, Looks: looks, Seed: seed, Schedule: ss.sched.schedule(),
		FailedRuns: ss.failed, FailedSimulations: ss.failedSims,
		BaseRuns: sides[0].runs, HeadRuns: sides[1].runs,
	}, nil
}

// A BaselineRequest asks for runs of one revision to be stored as
// baseline history (what a push to the default branch records).
type BaselineRequest struct {
	Source string
	Rev    string
	Count  int // 0: the config's count
	// History asks for the commit's first-parent history too
	// (BaselineResult.History): what change points on the branch are
	// detected along.
	History bool
}

// A BaselineResult is what a baseline stored.
type BaselineResult struct {
	Commit     workspace.Commit
	RunIDs     []int64
	OK, Failed int
	Config     *Config
	// BuildFailed says the revision did not build: its one stored run is
	// a build-failed run.
	BuildFailed bool
	// Repo and Machine are the repository and machine the runs are
	// stored under (store.RunRecord's).
	Repo, Machine string
	// History is the commit's first-parent history, oldest first, when
	// BaselineRequest.History asked for it.
	History []workspace.Commit
}

// Baseline builds rev with its own config and stores Count runs of every
// benchmark as baseline runs, after discarded warm-ups.
func (r *Runner) Baseline(ctx context.Context, req BaselineRequest) (*BaselineResult, error) {
	ws, err := r.open(ctx, req.Source)
	if err != nil {
		return nil, err
	}
	c, err := resolve(ctx, ws, "the", req.Rev)
	if err != nil {
		return nil, err
	}
	res, err := r.baseline(ctx, ws, c, req.Count)
	if err != nil || !req.History {
		return res, err
	}
	if res.History, err = ws.FirstParentHistory(ctx, c.SHA); err != nil {
		return nil, err
	}
	return res, nil
}

// baseline is Baseline of commit c of an open workspace.
func (r *Runner) baseline(ctx context.Context, ws *workspace.Workspace, c workspace.Commit, reqCount int) (*BaselineResult, error) {
	cfg, source, err := r.loadConfig(ctx, ws, c.SHA)
	if err != nil {
		return nil, err
	}
	r.log().Info("config", "source", source, "hash", cfg.Hash()[:12])
	if err := checkValgrind(cfg); err != nil {
		return nil, fmt.Errorf("%s: %w", source, err)
	}
	ss, err := r.newSession(ctx, ws, cfg, store.KindBaseline)
	if err != nil {
		return nil, err
	}
	defer ss.end(ctx)
	s := ss.newSide("rev", c, cfg)
	if err := ss.build(ctx, s); err != nil {
		return nil, err
	}
	count, warm := ss.count(reqCount), ss.warmup()
	ss.prog = newProgress(r.Progress, len(cfg.Benchmarks)*(warm+count))
	if err := ss.rounds(ctx, []*side{s}, warm, false); err != nil {
		return nil, err
	}
	if err := ss.rounds(ctx, []*side{s}, count, true); err != nil {
		return nil, err
	}
	ss.closeResidents()
	ss.prog.grow(ss.countSimulations([]*side{s}))
	if _, err := ss.simulate(ctx, []*side{s}); err != nil {
		return nil, err
	}
	ss.prog.finish()
	res := &BaselineResult{Commit: c, RunIDs: s.ids, Config: cfg, Failed: ss.failed + ss.failedSims, BuildFailed: s.build.Failed,
		Repo: ws.Source(), Machine: ss.env.ID()}
	res.OK = len(s.ids) - res.Failed
	return res, nil
}

func nonNilInts(v []int) []int {
	if v == nil {
		return []int{}
	}
	return v
}

func nonNilStrings(v []string) []string {
	if v == nil {
		return []string{}
	}
	return v
}

// nonNil returns args, or an empty list for nil: JSON [] rather than null.
func nonNil(args []string) []string {
	if args == nil {
		return []string{}
	}
	return args
}

// comparePlan says, before anything is built, what a comparison will do:
// which revisions, under which config, and how many runs, at least and at
// most, so that a first-time user knows what the next minutes hold.
func comparePlan(base, head workspace.Commit, source string, cfg *Config, warm, count, maxCount int) string {
	names := make([]string, len(cfg.Benchmarks))
	for i, b := range cfg.Benchmarks {
		names[i] = b.Name
	}
	what := fmt.Sprintf("%d benchmarks (%s)", len(names), strings.Join(names, ", "))
	if len(names) == 1 {
		what = names[0]
	}
	warmup := ""
	if warm > 0 {
		warmup = fmt.Sprintf(" after %d warm-up", warm)
	}
	s := fmt.Sprintf("comparing base %.7s with head %.7s (config: %s): build both, then run %s %d times a side%s, base and head interleaved",
		base.SHA, head.SHA, source, what, count, warmup)
	if maxCount > count {
		s += fmt.Sprintf(", and up to %d times a side if the result is unsettled", maxCount)
	}
	return s + "; the time left shows once the first run ends."
}

// minReachRuns is how many stored runs of a benchmark checkReachable
// needs before it trusts their median.
const minReachRuns = 3

// checkReachable returns an error wrapping ErrUnreachable when the
// builds of sides that are not cached, and count, or maxCount, runs a
// side of every benchmark (after the warm-ups), would take longer than
// timeout: builds by the median duration of this data directory's
// earlier builds of the same build commands, runs by the median wall time
// of this machine's stored runs of the config. Without stored runs it
// refuses only builds that alone take longer than timeout (Compare
// checks again once the warm-up rounds have run, by their time); with
// neither it cannot tell and does not refuse.
func (r *Runner) checkReachable(ctx context.Context, ws *workspace.Workspace, ss *session, sides []*side, count, maxCount int, timeout time.Duration) error {
	// Builds that run at once take about as long as the longest of them,
	// or as their sum shared among them.
	var builds, longest time.Duration
	var built []string
	for _, s := range sides {
		if slices.Contains(built, s.commit.SHA) {
			continue
		}
		built = append(built, s.commit.SHA)
		if d, ok := r.Builder.Estimate(ws, s.commit.SHA, s.cfg); ok {
			builds += d
			longest = max(longest, d)
		}
	}
	builds = max(longest, builds/time.Duration(buildsAtOnce(ss.cfg.BuildParallel, runtime.NumCPU(), len(built))))
	// Timed runs of any kind (baselines, comparisons, bisections) are as
	// long as each other.
	runs, err := r.Store.Runs(ctx, store.RunQuery{Repo: ws.Source(), Machine: ss.env.ID(), ConfigHash: sides[0].cfgHash, Status: analysis.StatusOK, Limit: 200})
	if err != nil {
		return fmt.Errorf("read stored runs: %w", err)
	}
	hist := map[analysis.Key][]float64{}
	for _, run := range runs {
		for _, s := range run.Samples {
			if s.Unit == "wall-sec/run" && run.Tool == "" {
				hist[s.Key] = append(hist[s.Key], s.Value)
			}
		}
	}
	var round time.Duration // one run of every benchmark, on one side
	for _, b := range ss.cfg.Benchmarks {
		walls := hist[analysis.Key{Benchmark: execute.ProcessBenchmark + "/benchmark=" + b.Name, Unit: "wall-sec/run"}]
		if len(walls) < minReachRuns {
			round = 0
			break
		}
		sorted := slices.Sorted(slices.Values(walls))
		round += time.Duration(sorted[len(sorted)/2] * float64(time.Second))
	}
	if round <= 0 {
		if builds > timeout {
			return fmt.Errorf("%w: the builds alone take about %v here (the median of this machine's earlier builds of this config), more than the %v given (--timeout): "+
				"give a --timeout of more than %v", ErrUnreachable, roundFor(builds), timeout, ceilSecond(builds))
		}
		return nil
	}
	warm := ss.warmup()
	spent := "after " + warmRounds(warm)
	if builds > 0 {
		spent = fmt.Sprintf("after the builds (about %v, the median of earlier builds of this config) and %s", roundFor(builds), warmRounds(warm))
	}
	return checkFits(timeout, timeout-builds-2*time.Duration(warm)*round, 2*round, spent,
		"a round of both sides took, by the median of this machine's stored runs of this config,", count, maxCount)
}

// warmRounds says how many warm-up rounds run.
func warmRounds(n int) string {
	if n == 1 {
		return "1 warm-up round"
	}
	return fmt.Sprintf("%d warm-up rounds", n)
}

// roundFor rounds d for a reader: to the millisecond under a second, to
// the tenth of a second above.
func roundFor(d time.Duration) time.Duration {
	if d < time.Second {
		return d.Round(time.Millisecond)
	}
	return d.Round(100 * time.Millisecond)
}

// ceilSecond rounds d up to a whole second.
func ceilSecond(d time.Duration) time.Duration {
	return (d + time.Second - 1).Truncate(time.Second)
}

// checkFits returns an error wrapping ErrUnreachable when count, or the
// cap maxCount, rounds of round each (every benchmark once on each side)
// do not fit in left, the part of timeout that spent (what comes first:
// the builds, the warm-up rounds) leaves; how says where round comes
// from. Its advice is a count that fits, or the timeout the count needs
// when not even one round fits.
func checkFits(timeout, left, round time.Duration, spent, how string, count, maxCount int) error {
	fits := 0
	if left > 0 {
		fits = int(left / round)
	}
	advise := func(flag string, n int) string {
		if fits < 1 {
			return fmt.Sprintf("not even one run a side fits: %s %d needs a --timeout of at least %v", flag, n, ceilSecond(timeout-left+time.Duration(n)*round))
		}
		return fmt.Sprintf("give at most %s %d, or more time", flag, fits)
	}
	switch {
	case count > fits:
		return fmt.Errorf("%w: %d runs a side take about %v here, more than the %v that --timeout %v leaves %s (%s %v); %s",
			ErrUnreachable, count, roundFor(time.Duration(count)*round), roundFor(max(left, 0)), timeout,
			spent, how, roundFor(round), advise("--count", count))
	case maxCount > fits:
		return fmt.Errorf("%w: the cap of %d runs a side takes about %v here, more than the %v that --timeout %v leaves %s (%s %v), "+
			"so an unsettled comparison would be cut off; %s",
			ErrUnreachable, maxCount, roundFor(time.Duration(maxCount)*round), roundFor(max(left, 0)), timeout,
			spent, how, roundFor(round), advise("--max-count", maxCount))
	}
	return nil
}

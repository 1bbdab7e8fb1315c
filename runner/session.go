package runner

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/execute"
	"github.com/perfbot/perfbot/runner/readers"
	"github.com/perfbot/perfbot/runner/system"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/store"
)

// A Store keeps runs and comparisons. *store.DB satisfies it.
type Store interface {
	// BeginSession, EndSession and AbandonSessions tie every run to the
	// session (one process's comparison, baseline or bisection) that
	// made it, so that a killed process's runs are not reused as if
	// their set were whole.
	BeginSession(ctx context.Context, s store.Session) (int64, error)
	EndSession(ctx context.Context, id int64) error
	AbandonSessions(ctx context.Context, gone func(owner string) bool) ([]store.Session, error)
	SaveRun(ctx context.Context, r *store.RunRecord) (int64, error)
	History(ctx context.Context, q store.HistoryQuery) (map[analysis.Key][]float64, error)
	SaveComparison(ctx context.Context, c *store.Comparison) (int64, error)
	// Runs and RunValues read stored runs back: Bisect reuses them.
	Runs(ctx context.Context, q store.RunQuery) ([]store.RunRecord, error)
	RunValues(ctx context.Context, q store.ValuesQuery) (map[string][]store.RunValue, error)
}

// A Runner builds revisions, runs their benchmarks and stores every run.
type Runner struct {
	// DataDir holds mirrors, worktrees and builds.
	DataDir string
	Store   Store
	// Logger gets progress and notes; nil discards them.
	Logger *slog.Logger
	// Progress, when set, shows which run is running and the ETA: a line
	// rewritten in place on a terminal, periodic lines otherwise.
	Progress io.Writer
	// Builder builds revisions; the zero value works.
	Builder Builder
	// Env is the machine's fingerprint; Fingerprint fills it when nil.
	Env *execute.Env
	// Inspect, when set, replaces perfbot system's inspection of the
	// machine before a comparison's runs (system.Inspect).
	Inspect func(context.Context) system.Report
	// Config, when set, says how to measure every revision, in place of
	// the repository's .perfbot.yml (see ExternalConfig).
	Config *ExternalConfig
}

func (r *Runner) log() *slog.Logger {
	if r.Logger == nil {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return r.Logger
}

func (r *Runner) env(ctx context.Context) execute.Env {
	if r.Env == nil {
		e := execute.Fingerprint(ctx)
		r.Env = &e
	}
	return *r.Env
}

// A side is one revision being measured, under one variant of the
// session's config: its commit, config, build and runs.
type side struct {
	name   string // "base", "head", or "rev" for a single revision
	commit workspace.Commit
	// cfg is the session's config, or a variant of it (Config.WithVariant)
	// whose benchmarks take more arguments; cfgHash and cfgJSON are what
	// each of the side's run records stores of it.
	cfg              *Config
	cfgHash, cfgJSON string
	build            BuildResult
	runs             []analysis.Run
	ids              []int64
	// slowest holds, per benchmark, the wall time of its slowest ok
	// timed run (warm-ups included): what its callgrind run's time
	// limit is made from.
	slowest map[string]time.Duration
}

// newSide returns a side of commit measured with cfg, the session's
// config or a variant of it.
func (ss *session) newSide(name string, commit workspace.Commit, cfg *Config) *side {
	s := &side{name: name, commit: commit, cfg: cfg, cfgHash: cfg.Hash(), cfgJSON: ss.cfgJSON, slowest: map[string]time.Duration{}}
	if cfg != ss.cfg {
		c, _ := json.Marshal(cfg) // plain data always marshals
		s.cfgJSON = string(c)
	}
	return s
}

// session is one revision set being measured under one config.
type session struct {
	id     int64 // the stored session its runs belong to; 0 until begin
	label  string
	r      *Runner
	ws     *workspace.Workspace
	cfg    *Config
	kind   store.Kind
	env    execute.Env
	prog   *progress
	failed int // timed runs that did not end ok, all sides
	// failedSims counts the callgrind runs that did not end ok: the
	// report warns of them; they leave the comparison complete.
	failedSims int

	// envJSON is what every run record stores of env, cfgJSON of cfg
	// (a side with a variant stores its own).
	envJSON, cfgJSON string
	// sched orders the sides of the measured rounds, warm the warm-up
	// rounds' (the config's order, seeded from the session's seed).
	sched, warm *scheduler
	// residents are the live processes of resident benchmarks, per side
	// and benchmark; end closes them.
	residents map[residentKey]*execute.Resident
	// round counts the measured rounds so far: every run of round r is
	// compared with Run.Round r, so that a paired analysis can pair
	// base's and head's runs of one round.
	round int
	// printed collects the phases the ok runs printed until the headline
	// is checked (checkHeadline); headlineChecked says it was.
	printed         map[string]bool
	headlineChecked bool
	// buildWarnings are the builds' caveats (BuildResult.Warnings), for
	// the report.
	buildWarnings []string
}

func (r *Runner) newSession(ctx context.Context, ws *workspace.Workspace, cfg *Config, kind store.Kind) (*session, error) {
	ss := &session{r: r, ws: ws, cfg: cfg, kind: kind, env: r.env(ctx)}
	e, _ := json.Marshal(ss.env) // plain data always marshals
	c, _ := json.Marshal(cfg)
	ss.envJSON, ss.cfgJSON = string(e), string(c)
	ss.seed(0)
	if err := r.EndAbandoned(ctx); err != nil {
		return nil, err
	}
	ss.label = sessionLabel(ctx)
	return ss, nil
}

// EndAbandoned cleans up after perfbot processes that died on this host
// without ending their sessions: it marks their running sessions
// abandoned, so that their runs are never reused as whole, and kills
// every process their benchmarks and builds left running
// (execute.EndLeftovers, which finds them by execute.OwnerEnv), so that
// none runs beside the next comparison. It logs each session and each
// process, and how many processes it ended. Every session calls it before
// it measures; a worker calls it when it starts. The processes are ended
// even when the store cannot be reached; the error is the store's.
func (r *Runner) EndAbandoned(ctx context.Context) error {
	gone, err := r.Store.AbandonSessions(ctx, system.OwnerGone)
	sessions := map[string][]int64{} // owner -> its sessions abandoned now
	for _, g := range gone {
		r.log().Warn("session abandoned: its process is gone; its runs are kept but not reused", "session", g.ID,
			"kind", g.Kind, "repo", g.Repo, "label", g.Label, "started", g.StartedAt.Format(time.RFC3339))
		sessions[g.Owner] = append(sessions[g.Owner], g.ID)
	}
	left, lerr := execute.EndLeftovers(system.OwnerGone)
	if lerr != nil {
		r.log().Warn("leftover processes not looked for", "err", lerr)
	}
	ended := 0
	for _, l := range left {
		if l.Err != nil {
			r.log().Warn("leftover process of a perfbot process that is gone not ended", "pid", l.PID, "command", l.Command,
				"owner", l.Owner, "sessions", sessions[l.Owner], "err", l.Err)
			continue
		}
		ended++
		r.log().Warn("ended a leftover process of a perfbot process that is gone", "pid", l.PID, "command", l.Command,
			"owner", l.Owner, "sessions", sessions[l.Owner])
	}
	if len(left) > 0 {
		r.log().Warn("leftover processes of perfbot processes that are gone", "ended", ended, "not_ended", len(left)-ended)
	}
	return err
}

// begin stores the session, once, before its first run or comparison is
// stored: a session refused before that (a --timeout its runs cannot fit,
// say) leaves no row behind.
func (ss *session) begin(ctx context.Context) error {
	if ss.id != 0 {
		return nil
	}
	id, err := ss.r.Store.BeginSession(ctx, store.Session{Repo: ss.ws.Source(), Kind: ss.kind, Owner: system.Owner(), Label: ss.label})
	if err != nil {
		return err
	}
	ss.id = id
	ss.r.log().Info("session", "id", ss.id, "kind", ss.kind)
	return nil
}

// end ends the session: its runs are whole and may be reused. It runs
// after a cancellation too (the process is alive and stored every run
// it kept); a session it cannot end stays running, and the next session
// on this host, once this process is gone, marks it abandoned.
func (ss *session) end(ctx context.Context) {
	ss.closeResidents()
	if ss.id == 0 {
		return // nothing was stored
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	if err := ss.r.Store.EndSession(ctx, ss.id); err != nil {
		ss.r.log().Warn("session not ended: its runs will not be reused", "session", ss.id, "err", err)
	}
}

type sessionLabelKey struct{}

// WithSessionLabel returns ctx carrying label, which the sessions that
// Compare, Baseline, Backfill and Bisect store under ctx record as what
// ran them (a job and its attempt). Without one they record the
// process's command.
func WithSessionLabel(ctx context.Context, label string) context.Context {
	return context.WithValue(ctx, sessionLabelKey{}, label)
}

func sessionLabel(ctx context.Context) string {
	if l, ok := ctx.Value(sessionLabelKey{}).(string); ok {
		return l
	}
	var words []string
	for _, a := range os.Args[:min(2, len(os.Args))] {
		words = append(words, filepath.Base(a))
	}
	return strings.Join(words, " ")
}

// seed orders the session's rounds by the config's order with seed, or
// with a new seed when it is 0; it returns the seed.
func (ss *session) seed(seed uint64) uint64 {
	if seed == 0 {
		seed = NewSeed()
	}
	ss.sched = newScheduler(ss.cfg.Order, seed)
	ss.warm = newScheduler(ss.cfg.Order, seed+1)
	return seed
}

func (r *Runner) open(ctx context.Context, source string) (*workspace.Workspace, error) {
	if source == "" {
		return nil, fmt.Errorf("no repository: give --repo with a path to a git repository or a clone URL")
	}
	return workspace.Open(ctx, source, r.DataDir)
}

// resolve resolves rev and names the side in the error.
func resolve(ctx context.Context, ws *workspace.Workspace, what, rev string) (workspace.Commit, error) {
	if rev == "" {
		return workspace.Commit{}, fmt.Errorf("no %s revision given", what)
	}
	c, err := ws.Resolve(ctx, rev)
	if err != nil {
		return c, fmt.Errorf("%s revision: %w", what, err)
	}
	return c, nil
}

// build builds s; a failed build is recorded as a build-failed run.
func (ss *session) build(ctx context.Context, s *side) error {
	ss.r.log().Info("build", "side", s.name, "sha", s.commit.Short())
	res, err := ss.r.Builder.Build(ctx, ss.ws, s.commit, ss.cfg)
	if err != nil {
		return fmt.Errorf("build %s %s: %w", s.name, s.commit.Short(), err)
	}
	return ss.built(ctx, s, res)
}

// built takes s's build result: a failed build is recorded as a
// build-failed run, and a build's warnings become the report's.
func (ss *session) built(ctx context.Context, s *side, res BuildResult) error {
	s.build = res
	for _, w := range res.Warnings {
		if !slices.Contains(ss.buildWarnings, w) {
			ss.buildWarnings = append(ss.buildWarnings, w)
		}
	}
	if res.Failed {
		ss.r.log().Warn("build failed", "side", s.name, "sha", s.commit.Short(), "command", strings.Join(res.FailedCommand, " "), "reason", res.Reason, "output", lastLines(res.Output, 5))
		return ss.recordBuildFailure(ctx, s)
	} else if res.Cached {
		ss.r.log().Info("build cached", "side", s.name, "sha", s.commit.Short())
	}
	return nil
}

// buildSides builds every side, each commit once: a side of a commit
// built for an earlier side (an A/A comparison, or two variants of one
// revision) runs that build, and records its failure as its own. Before
// anything builds, the declared steps' inputs are checked at every
// commit (Builder.Check). Then the commits build at once, as many as
// buildsAtOnce allows, each step with MAKEFLAGS=-jN for its share of the
// CPUs. A build that fails is a result like any other: the others go on.
// An error (ctx done, the data directory unusable) stops them all.
func (ss *session) buildSides(ctx context.Context, sides []*side) error {
	var own []*side // the first side of each commit, in order
	for _, s := range sides {
		if !slices.ContainsFunc(own, func(o *side) bool { return o.commit.SHA == s.commit.SHA }) {
			own = append(own, s)
		}
	}
	var p problems
	for _, s := range own {
		_, sp, err := ss.r.Builder.planProblems(ctx, ss.ws, s.commit.SHA, s.cfg)
		if err != nil {
			return fmt.Errorf("build %s %s: %w", s.name, s.commit.Short(), err)
		}
		for _, msg := range sp {
			p.add("%s: %s", s.name, msg)
		}
	}
	if err := p.err(); err != nil {
		return err
	}
	uncached := 0
	for _, s := range own {
		if !ss.r.Builder.cached(ss.ws, s.commit.SHA, s.cfg) {
			uncached++
		}
	}
	at := buildsAtOnce(ss.cfg.BuildParallel, runtime.NumCPU(), len(own))
	jobs := max(1, runtime.NumCPU()/max(1, min(at, uncached)))
	if len(own) > 1 {
		ss.r.log().Info("builds", "revisions", len(own), "at_once", at, "make_jobs", jobs)
	}
	results := make([]BuildResult, len(own))
	errs := make([]error, len(own))
	bctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int, len(own))
	for i := range own {
		next <- i
	}
	close(next)
	var wg sync.WaitGroup
	for range at {
		wg.Go(func() {
			for i := range next {
				s := own[i]
				if bctx.Err() != nil {
					errs[i] = bctx.Err()
					continue
				}
				ss.r.log().Info("build", "side", s.name, "sha", s.commit.Short())
				results[i], errs[i] = ss.r.Builder.build(bctx, ss.ws, s.commit, s.cfg, jobs)
				if errs[i] != nil {
					cancel() // the session stops: the other builds are wasted
				}
			}
		})
	}
	wg.Wait()
	// The error that stopped the others, not the cancellations it caused.
	for i, err := range errs {
		if err != nil && (ctx.Err() != nil || !errors.Is(err, context.Canceled)) {
			return fmt.Errorf("build %s %s: %w", own[i].name, own[i].commit.Short(), err)
		}
	}
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("build %s %s: %w", own[i].name, own[i].commit.Short(), err)
		}
	}
	for _, s := range sides {
		i := slices.IndexFunc(own, func(o *side) bool { return o.commit.SHA == s.commit.SHA })
		if own[i] != s {
			ss.r.log().Info("build shared", "side", s.name, "with", own[i].name, "sha", s.commit.Short())
		}
		if err := ss.built(ctx, s, results[i]); err != nil {
			return err
		}
	}
	return nil
}

// buildsAtOnce returns how many of n revisions build at once: setting
// (Config.BuildParallel) when positive, else all of them on a host of 4
// CPUs or more and one at a time on a smaller one; never more than n, at
// least 1.
func buildsAtOnce(setting, cpus, n int) int {
	at := setting
	if at <= 0 {
		at = n
		if cpus < 4 {
			at = 1
		}
	}
	return max(1, min(at, n))
}

// recordBuildFailure records s's failed build as a build-failed run.
func (ss *session) recordBuildFailure(ctx context.Context, s *side) error {
	detail := s.build.Reason
	if s.build.Output != "" {
		detail += "\n" + s.build.Output
	}
	now := time.Now()
	return ss.record(ctx, s, analysis.Run{Revision: s.commit.SHA, Status: analysis.StatusBuildFailed, Detail: detail}, now, now, "")
}

// runOnce runs benchmark b of side s once; keep says whether the run is
// measured (stored and compared) or a warm-up.
func (ss *session) runOnce(ctx context.Context, s *side, b *Benchmark, keep bool) error {
	vars := s.build.Vars()
	cpus, err := b.RunCPUs()
	if err != nil {
		return err
	}
	spec := execute.Spec{
		Args:    b.Argv(vars),
		Dir:     s.build.SrcDir,
		Env:     b.Environ(vars),
		Timeout: cmp.Or(b.Timeout, ss.cfg.Timeout),
		CPUs:    cpus,
		Name:    b.Name,
		// Empty unless the benchmark asks for a profile.
		CPUProfileFlag:  b.CPUProfile,
		MemProfileFlag:  b.MemProfile,
		MaxProfileBytes: store.MaxProfileBytes,
	}
	if rc := b.ReaderConfig(); rc != nil {
		if spec.Reader, err = readers.New(*rc); err != nil {
			return fmt.Errorf("benchmark %s: %w", b.Name, err) // Validate refused it already
		}
	}
	label := s.name
	if !keep {
		label += " (warm-up)"
	}
	ss.prog.start(b.Name, label)
	started := time.Now()
	var res execute.Result
	if b.Resident {
		res, err = ss.residentRun(ctx, s, b, spec)
	} else {
		res, err = execute.Run(ctx, spec)
	}
	ended := time.Now()
	ss.prog.done()
	if err != nil {
		return fmt.Errorf("run %s on %s %s: %w", b.Name, s.name, s.commit.Short(), err)
	}
	run := res.Run
	run.Revision = s.commit.SHA
	if keep {
		run.Round = ss.round
	}
	if run.Status == analysis.StatusOK && !ss.headlineChecked {
		if ss.printed == nil {
			ss.printed = map[string]bool{} // non-nil: an ok run was seen
		}
		for _, smp := range run.Samples {
			if smp.Phase != "" { // a process's own series, not a phase
				ss.printed[smp.Phase] = true
			}
		}
	}
	if run.Status != analysis.StatusOK {
		ss.r.log().Warn("run failed", "benchmark", b.Name, "side", s.name, "sha", s.commit.Short(), "status", run.Status)
	} else {
		s.slowest[b.Name] = max(s.slowest[b.Name], res.Wall)
	}
	if !keep {
		return nil
	}
	for _, w := range res.Warnings {
		ss.r.log().Warn("run warning", "benchmark", b.Name, "side", s.name, "sha", s.commit.Short(), "warning", w)
	}
	return ss.record(ctx, s, run, started, ended, res.StderrTail)
}

// residentKey names the resident process of one benchmark of one side.
type residentKey struct {
	side  *side
	bench string
}

// residentRun runs benchmark b of side s in its resident process,
// starting one when the side has none (its first run, or the one after a
// run that stopped the last): a process that cannot start fails this run
// with the reason, and the next run tries again. Starting is not part of
// the run's measurement.
func (ss *session) residentRun(ctx context.Context, s *side, b *Benchmark, spec execute.Spec) (execute.Result, error) {
	key := residentKey{s, b.Name}
	p := ss.residents[key]
	if p == nil {
		r, failed, err := execute.StartResident(ctx, spec)
		if err != nil || r == nil {
			return failed, err
		}
		if ss.residents == nil {
			ss.residents = map[residentKey]*execute.Resident{}
		}
		ss.residents[key], p = r, r
		ss.r.log().Info("resident process ready", "benchmark", b.Name, "side", s.name, "sha", s.commit.Short())
	}
	res, err := p.Run(ctx)
	if err != nil || p.Broken() != "" {
		delete(ss.residents, key)
	}
	return res, err
}

// closeResidents ends every resident process of the session.
func (ss *session) closeResidents() {
	for key, p := range ss.residents {
		if w := p.Close(residentGrace); w != "" {
			ss.r.log().Warn("resident process", "benchmark", key.bench, "side", key.side.name, "warning", w)
		}
		delete(ss.residents, key)
	}
}

// residentGrace is how long a resident process has to exit once its
// stdin closes, before it is killed.
const residentGrace = 10 * time.Second

func (ss *session) record(ctx context.Context, s *side, run analysis.Run, started, ended time.Time, stderr string) error {
	if run.Status != analysis.StatusOK {
		if run.Tool == "" {
			ss.failed++
		} else {
			ss.failedSims++
		}
		if run.Detail == "" {
			run.Detail = stderr
		}
	}
	rec := &store.RunRecord{
		Repo: ss.ws.Source(),
		Commit: store.Commit{
			SHA: s.commit.SHA, Parents: s.commit.Parents,
			AuthorTime: s.commit.AuthorTime, Subject: s.commit.Subject,
		},
		Kind:       ss.kind,
		ConfigHash: s.cfgHash,
		Config:     s.cfgJSON,
		Machine:    ss.env.ID(),
		Env:        ss.envJSON,
		StartedAt:  started,
		EndedAt:    ended,
		Status:     run.Status,
		Tool:       run.Tool,
		Detail:     run.Detail,
		Samples:    run.Samples,
		Profiles:   run.Profiles,
		Spans:      run.Spans,
		SessionID:  ss.id,
		Round:      run.Round,
	}
	if err := ss.begin(ctx); err != nil {
		return fmt.Errorf("store run of %s %s: %w", s.name, s.commit.Short(), err)
	}
	rec.SessionID = ss.id
	id, err := ss.r.Store.SaveRun(ctx, rec)
	if err != nil {
		return fmt.Errorf("store run of %s %s: %w", s.name, s.commit.Short(), err)
	}
	s.runs = append(s.runs, run)
	s.ids = append(s.ids, id)
	return nil
}

// rounds runs n interleaved rounds of every benchmark: in each round every
// side runs each benchmark once, so slow drift of the machine hits every
// side alike, in the order the config's order: gives (random by default,
// so that no position effect or periodic interference lands on one side).
// Each side runs its own config's version of the benchmark (its
// variant's arguments).
func (ss *session) rounds(ctx context.Context, sides []*side, n int, keep bool) error {
	sched := ss.sched
	if !keep {
		sched = ss.warm
	}
	for range n {
		if keep {
			ss.round++
		}
		for i := range ss.cfg.Benchmarks {
			for _, s := range sched.next(ss.cfg.Benchmarks[i].Name, sides) {
				if s.build.Failed {
					continue
				}
				sched.record(s.name, keep)
				if err := ss.runOnce(ctx, s, &s.cfg.Benchmarks[i], keep); err != nil {
					return err
				}
			}
		}
		if err := ss.checkHeadline(); err != nil {
			return err
		}
	}
	return nil
}

// checkHeadline refuses, after the first round with an ok run (a
// warm-up round when there is one, so nothing is stored yet), a config
// whose thresholds.headline names a phase no benchmark printed: the
// verdict would silently be about every phase instead. Phase names come
// from the benchmarks' output, so this is the earliest it can be known.
// total, the default, is exempt: a benchmark that prints no total (a
// plain Go benchmark) is judged by all its primary series, as
// docs/statistics.md says.
func (ss *session) checkHeadline() error {
	h := ss.cfg.Thresholds.Headline
	if ss.headlineChecked || ss.printed == nil {
		return nil
	}
	ss.headlineChecked = true
	if h == "" || h == "total" || ss.printed[h] {
		return nil
	}
	var names []string
	for p := range ss.printed {
		names = append(names, p)
	}
	slices.Sort(names)
	printed := "they printed " + strings.Join(names, ", ")
	if len(names) == 0 {
		printed = "they printed no phases"
	}
	return fmt.Errorf("%w: thresholds.headline: %q is not a phase any benchmark printed in its first run (%s); "+
		"name one of those, or leave the key out for total", ErrInvalidConfig, h, printed)
}

// callgrindLimitFactor and minCallgrindLimit make a callgrind run's
// time limit: so many times the side's slowest timed run of the
// benchmark, and at least so long. Callgrind ran perfbot prove 24 to 30
// times slower than a timed run on the 2-core development machine
// (README.md); valgrind's own figure for compute-bound code is 50 to
// 100.
const (
	callgrindLimitFactor = 200
	minCallgrindLimit    = time.Minute
)

// checkValgrind returns an error wrapping execute.ErrNoValgrind when a
// benchmark of cfg asks for callgrind and valgrind is not installed: it
// is better said before the builds than after the timed runs.
func checkValgrind(cfg *Config) error {
	for _, b := range cfg.Benchmarks {
		if !b.Callgrind {
			continue
		}
		if _, err := execute.LookValgrind(b.Environ(Vars{})); err != nil {
			return fmt.Errorf("benchmark %s has callgrind: true, but %w", b.Name, err)
		}
	}
	return nil
}

// simulate makes the callgrind run of every benchmark that asks for one
// (Benchmark.Callgrind), on every side that has an ok timed run of it,
// and stores it as the side's run with Tool callgrind. It returns how
// many it made.
func (ss *session) simulate(ctx context.Context, sides []*side) (int, error) {
	n := 0
	for i, b := range ss.cfg.Benchmarks {
		if !b.Callgrind {
			continue
		}
		for _, s := range sides {
			if s.build.Failed {
				continue
			}
			if s.slowest[b.Name] == 0 {
				ss.r.log().Warn("no callgrind run: no timed run of the benchmark ended ok", "benchmark", b.Name, "side", s.name, "sha", s.commit.Short())
				continue
			}
			if err := ss.runCallgrind(ctx, s, &s.cfg.Benchmarks[i]); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}

// countSimulations returns how many callgrind runs simulate would make.
func (ss *session) countSimulations(sides []*side) int {
	n := 0
	for _, b := range ss.cfg.Benchmarks {
		for _, s := range sides {
			if b.Callgrind && !s.build.Failed && s.slowest[b.Name] > 0 {
				n++
			}
		}
	}
	return n
}

// runCallgrind makes benchmark b's callgrind run on side s and stores it.
func (ss *session) runCallgrind(ctx context.Context, s *side, b *Benchmark) error {
	vars := s.build.Vars()
	cpus, err := b.RunCPUs()
	if err != nil {
		return err
	}
	spec := execute.Spec{
		Args:    b.Argv(vars),
		Dir:     s.build.SrcDir,
		Env:     b.Environ(vars),
		Timeout: max(minCallgrindLimit, callgrindLimitFactor*s.slowest[b.Name]),
		CPUs:    cpus,
		Name:    b.Name,
	}
	ss.prog.start(b.Name, s.name+" (callgrind)")
	started := time.Now()
	res, err := execute.RunCallgrind(ctx, spec)
	ended := time.Now()
	ss.prog.done()
	if err != nil {
		return fmt.Errorf("run %s under callgrind on %s %s: %w", b.Name, s.name, s.commit.Short(), err)
	}
	run := res.Run
	run.Revision = s.commit.SHA
	if run.Status != analysis.StatusOK {
		ss.r.log().Warn("callgrind run failed", "benchmark", b.Name, "side", s.name, "sha", s.commit.Short(), "status", run.Status)
	} else {
		ss.r.log().Info("callgrind run", "benchmark", b.Name, "side", s.name, "sha", s.commit.Short(),
			"wall", res.Wall.Round(time.Millisecond), "slowdown", fmt.Sprintf("%.1fx", res.Wall.Seconds()/s.slowest[b.Name].Seconds()))
	}
	for _, w := range res.Warnings {
		ss.r.log().Warn("run warning", "benchmark", b.Name, "side", s.name, "sha", s.commit.Short(), "tool", analysis.ToolCallgrind, "warning", w)
	}
	return ss.record(ctx, s, run, started, ended, res.StderrTail)
}

// count returns the configured measured runs per side: the largest of the
// benchmarks' counts, or override when positive.
func (ss *session) count(override int) int {
	if override > 0 {
		return override
	}
	n := ss.cfg.Count
	for _, b := range ss.cfg.Benchmarks {
		n = max(n, b.Count)
	}
	return n
}

func (ss *session) warmup() int {
	n := ss.cfg.Warmup
	for _, b := range ss.cfg.Benchmarks {
		n = max(n, b.Warmup)
	}
	return n
}

// analysisEnv turns the fingerprint into the flat map the report shows.
func analysisEnv(e execute.Env) analysis.Env {
	m := analysis.Env{
		"machine": e.ID(),
		"cpu":     e.CPUModel,
		"cpus":    strconv.Itoa(e.NumCPU),
		"kernel":  e.Kernel,
		"go":      e.GoVersion,
		"os":      e.OS + "/" + e.Arch,
	}
	if len(e.GPUs) > 0 {
		var names []string
		for _, g := range e.GPUs {
			names = append(names, g.Name)
		}
		m["gpu"] = strings.Join(names, ", ")
		m["gpu-driver"] = e.GPUDriverVersion
	}
	return m
}

func (r *Runner) optionsFor(cfg *Config) analysis.Options {
	return analysis.Options{
		Alpha:        cfg.Thresholds.Alpha,
		Spending:     cfg.Thresholds.Spending,
		MinChangePct: cfg.Thresholds.MinChangePct,
		MinHistory:   cfg.Thresholds.MinHistory,
		PrimaryUnits: cfg.PrimaryUnits,
		Paired:       cfg.Thresholds.Paired,
		Headline:     cfg.Thresholds.Headline,
		FailOn:       cfg.Thresholds.FailOn,
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/perfbot/perfbot/runner/execute"
	"github.com/perfbot/perfbot/runner/workspace"
)

// BuildEnv names the variables of perfbot's own environment that build
// commands see, when set; nothing else of it is passed on (no tokens, no
// database URLs). Builder.PassEnv adds more, and a step's env: more
// still. Builds also get PERFBOT_SRC, PERFBOT_OUT, execute.OwnerEnv and,
// unless PassEnv or the step's env gives it, MAKEFLAGS=-jN: N is the
// CPUs divided by the builds running at once (Config.BuildParallel).
var BuildEnv = []string{
	"PATH", "HOME", "TMPDIR", "LANG",
	"GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY",
	"GOTOOLCHAIN", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB",
}

// defaultTailBytes is how much build output a BuildResult keeps by default.
const defaultTailBytes = 32 << 10

// A Builder builds revisions with a Config's build steps and caches
// the outputs under the workspace's data directory:
//
//	builds/<sha>-<build hash[:12]>/       ${PERFBOT_OUT}, the outputs
//	builds/<sha>-<build hash[:12]>.done   the marker: JSON, written after success
//	builds/<sha>-<build hash[:12]>.log    the last attempt's whole output
//	builds/<sha>-<build hash[:12]>.lock   serializes builds of the key
//
// and the outputs of declared steps (BuildStep.Inputs), by step key:
//
//	builds/steps/<key[:32]>/       the step's outputs, as under ${PERFBOT_OUT}
//	builds/steps/<key[:32]>.done   the marker: JSON, written after success
//	builds/steps/<key[:32]>.lock   serializes runs and reuses of the key
//	builds/steps/<key[:32]>.src/   the step's input files while it runs
//	builds/steps/<key[:32]>.out/   its ${PERFBOT_OUT} while it runs
//
// The zero Builder is ready to use. Builds of one key by several
// goroutines or processes run once; the others wait and reuse it. So do
// declared steps of one key, whichever revisions they build.
type Builder struct {
	// Logger gets a line per build; nil logs nothing.
	Logger *slog.Logger
	// PassEnv names more variables of perfbot's environment to pass to
	// build commands, beyond BuildEnv (CUDA_HOME, CC, …).
	PassEnv []string
	// TailBytes is how much of the end of the build output a
	// BuildResult keeps; 0 means 32 KiB.
	TailBytes int
}

// A BuildResult is what Build did. A build that failed is a result, not
// an error: Failed is set and Output says why, for the caller to record a
// build-failed run.
type BuildResult struct {
	// SHA is the commit built.
	SHA string
	// BuildHash is the Config.BuildHash the build is keyed by.
	BuildHash string
	// SrcDir is the commit's worktree (${PERFBOT_SRC}).
	SrcDir string
	// OutDir holds the build outputs (${PERFBOT_OUT}).
	OutDir string
	// Cached reports that an earlier successful build was reused and no
	// command ran.
	Cached bool
	// Failed reports that a build command failed; Outputs are partial
	// and not cached.
	Failed bool
	// FailedCommand is the failed command, expanded.
	FailedCommand []string
	// Reason says how it failed: "exit status 2", "timed out after 30m0s",
	// `exec: "make": executable file not found in $PATH`.
	Reason string
	// Output is the end of the commands' combined standard output and
	// error, each command introduced by a "$ command" line.
	Output string
	// LogFile holds the whole output of the build that ran.
	LogFile string
	// Duration is how long the build commands took (for a cached
	// result, the original build's).
	Duration time.Duration
	// Steps says what became of each declared step of a build that ran
	// (none for a cached build).
	Steps []StepResult
	// Warnings are caveats about the outputs for the report: a declared
	// step whose re-run (Config.BuildVerify) made other bytes.
	Warnings []string
}

// A StepResult is what a build did with one declared step.
type StepResult struct {
	// Index is the step's position in Config.Build.
	Index int
	// Key is the step's cache key.
	Key string
	// Reused reports that the outputs came from the cache and the step
	// did not run.
	Reused bool
	// BuiltFor is the commit the reused outputs were first made for.
	BuiltFor string
	// Checked reports that the step ran again to check a reuse
	// (Config.BuildVerify); Mismatch lists the outputs that differed.
	Checked  bool
	Mismatch []string
}

// Vars returns the variables of commands run against this build.
func (r *BuildResult) Vars() Vars { return Vars{Src: r.SrcDir, Out: r.OutDir} }

// buildRecord is the content of a build's marker file.
type buildRecord struct {
	SHA       string        `json:"sha"`
	BuildHash string        `json:"build_hash"`
	Commands  [][]string    `json:"commands"`
	Finished  time.Time     `json:"finished"`
	Duration  time.Duration `json:"duration_ns"`
	Output    string        `json:"output"`
}

// Build checks commit out (ws.Checkout) and runs cfg.Build in its
// worktree, each command limited to cfg.BuildTimeout, with
// ${PERFBOT_OUT} an emptied directory and an environment of BuildEnv,
// PassEnv, the step's env, PERFBOT_SRC, PERFBOT_OUT and MAKEFLAGS=-jN
// for all the CPUs. A build of the same commit and build commands that
// succeeded before is reused without running anything. A declared step
// (BuildStep.Inputs) runs apart, in a directory of its input files, or
// not at all when an earlier build's step read the same files: its
// outputs are copied from the cache.
//
// A command that fails, times out or cannot start gives a result with
// Failed set and a nil error. Errors are for what is not the commit's
// fault: ctx done, the worktree or the data directory unusable; and
// inputs that name nothing at the commit (wrapping ErrInvalidConfig),
// found before any step runs.
func (b *Builder) Build(ctx context.Context, ws *workspace.Workspace, commit workspace.Commit, cfg *Config) (BuildResult, error) {
	return b.build(ctx, ws, commit, cfg, runtime.NumCPU())
}

// build is Build with jobs for MAKEFLAGS=-jN.
func (b *Builder) build(ctx context.Context, ws *workspace.Workspace, commit workspace.Commit, cfg *Config, jobs int) (BuildResult, error) {
	sha := commit.SHA
	res := BuildResult{SHA: sha, BuildHash: cfg.BuildHash()}
	key := sha + "-" + res.BuildHash[:12]
	builds := filepath.Join(ws.DataDir(), "builds")
	res.OutDir = filepath.Join(builds, key)
	res.LogFile = res.OutDir + ".log"
	marker := res.OutDir + ".done"
	log := b.logger().With("sha", commit.Short(), "build_hash", res.BuildHash[:12])

	rec, ok := readMarker(marker, res)
	if !ok {
		unlock, err := workspace.Lock(ctx, res.OutDir+".lock")
		if err != nil {
			return BuildResult{}, fmt.Errorf("build %s: %w", commit.Short(), err)
		}
		defer unlock()
		// Another process may have built it while this one waited.
		rec, ok = readMarker(marker, res)
	}
	src, err := ws.Checkout(ctx, sha)
	if err != nil {
		return BuildResult{}, fmt.Errorf("build %s: %w", commit.Short(), err)
	}
	res.SrcDir = src
	if ok {
		res.Cached, res.Output, res.Duration = true, rec.Output, rec.Duration
		log.Info("build cached", "out", res.OutDir)
		return res, nil
	}
	plans, err := b.plan(ctx, ws, sha, cfg)
	if err != nil {
		return BuildResult{}, fmt.Errorf("build %s: %w", commit.Short(), err)
	}
	return b.runSteps(ctx, log, ws, cfg, plans, res, marker, jobs)
}

// runSteps runs the steps; the caller holds the key's lock.
func (b *Builder) runSteps(ctx context.Context, log *slog.Logger, ws *workspace.Workspace, cfg *Config, plans []stepPlan,
	res BuildResult, marker string, jobs int) (BuildResult, error) {
	fail := func(err error) (BuildResult, error) {
		return BuildResult{}, fmt.Errorf("build %s: %w", short(res.SHA), err)
	}
	if err := os.Remove(marker); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fail(err)
	}
	if err := os.RemoveAll(res.OutDir); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(res.OutDir, 0o755); err != nil {
		return fail(err)
	}
	logFile, err := os.Create(res.LogFile)
	if err != nil {
		return fail(err)
	}
	defer logFile.Close()
	n := b.TailBytes
	if n <= 0 {
		n = defaultTailBytes
	}
	tail := &tailBuffer{max: n}
	// One writer for both streams: exec then copies them through one pipe,
	// in the order the command wrote them.
	out := io.MultiWriter(logFile, tail)

	vars := res.Vars()
	start := time.Now()
	log.Info("build start", "commands", len(cfg.Build), "src", res.SrcDir, "out", res.OutDir, "jobs", jobs)
	var commands [][]string
	for i, st := range cfg.Build {
		var argv []string
		var reason string
		var err error
		if st.Declared() {
			argv, reason, err = b.runDeclared(ctx, log, ws, cfg, i, plans[i], &res, out, jobs)
		} else {
			argv = vars.ExpandAll(st.Run)
			fmt.Fprintf(out, "$ %s\n", quoteArgs(argv))
			reason, err = runBuildCommand(ctx, res.SrcDir, argv, b.environ(st, vars, jobs), cfg.BuildTimeout, out)
		}
		if err != nil {
			return fail(err)
		}
		commands = append(commands, argv)
		if reason != "" {
			fmt.Fprintf(out, "perfbot: %s: %s\n", quoteArgs(argv), reason)
			res.Failed, res.FailedCommand, res.Reason = true, argv, reason
			res.Output, res.Duration = tail.String(), time.Since(start)
			log.Warn("build failed", "command", quoteArgs(argv), "reason", reason, "log", res.LogFile)
			return res, nil
		}
	}
	res.Output, res.Duration = tail.String(), time.Since(start)
	rec := buildRecord{
		SHA: res.SHA, BuildHash: res.BuildHash, Commands: commands,
		Finished: time.Now().UTC(), Duration: res.Duration, Output: res.Output,
	}
	if err := writeMarker(marker, rec); err != nil {
		return fail(err)
	}
	log.Info("build done", "duration", res.Duration.Round(time.Millisecond))
	return res, nil
}

// runBuildCommand runs one command in its own process group, so that a
// timeout kills whatever it started, and so does its end: nothing a build
// step leaves running (a daemon, a watcher) runs beside the benchmarks.
// It returns why the command failed, or "" when it succeeded; err is set
// only when ctx is done.
//
// The command gets SIGKILL when the thread that started it ends
// (Pdeathsig): the goroutine holds that thread until the command has been
// waited for, so no other goroutine can end it first (one that locks a
// thread and returns does). What the command started outlives a killed
// perfbot, and carries execute.OwnerEnv for the next one to end it.
func runBuildCommand(ctx context.Context, dir string, argv, env []string, timeout time.Duration, out io.Writer) (reason string, err error) {
	cctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(cctx, argv[0], argv[1:]...)
	cmd.Dir = dir
	cmd.Env = env
	cmd.Stdout = out
	cmd.Stderr = out
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	cmd.WaitDelay = 5 * time.Second
	runtime.LockOSThread()
	runErr := cmd.Run()
	runtime.UnlockOSThread()
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) // ESRCH: nothing left
	}
	if ctx.Err() != nil {
		return "", ctx.Err()
	}
	switch {
	case errors.Is(cctx.Err(), context.DeadlineExceeded):
		return fmt.Sprintf("timed out after %v", timeout), nil
	case runErr == nil:
		return "", nil
	case errors.Is(runErr, exec.ErrWaitDelay) && cmd.ProcessState != nil && cmd.ProcessState.Success():
		// It succeeded but left a process holding its output open.
		fmt.Fprintf(out, "perfbot: a process the command started still held its output %v after it exited\n", cmd.WaitDelay)
		return "", nil
	}
	return runErr.Error(), nil
}

// environ returns build step st's environment: passed, then the step's
// env, vars, MAKEFLAGS=-j<jobs> unless set already, execute.OwnerEnv
// last.
func (b *Builder) environ(st BuildStep, vars Vars, jobs int) []string {
	env := b.passed()
	names := make([]string, 0, len(st.Env))
	for name := range st.Env {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		env = append(env, name+"="+vars.Expand(st.Env[name]))
	}
	env = append(env, vars.Environ()...)
	if !slices.ContainsFunc(env, func(kv string) bool { return strings.HasPrefix(kv, "MAKEFLAGS=") }) {
		env = append(env, fmt.Sprintf("MAKEFLAGS=-j%d", max(jobs, 1)))
	}
	if m := execute.OwnerMarker(); m != "" {
		env = append(env, m)
	}
	return env
}

// passed returns the variables of perfbot's own environment that builds
// see (BuildEnv and PassEnv), in that order.
func (b *Builder) passed() []string {
	var env []string
	for _, name := range append(BuildEnv[:len(BuildEnv):len(BuildEnv)], b.PassEnv...) {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	return env
}

func (b *Builder) logger() *slog.Logger {
	if b.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Logger
}

// cached reports whether a build of commit sha with cfg's build steps is
// cached, so that building it runs nothing.
func (b *Builder) cached(ws *workspace.Workspace, sha string, cfg *Config) bool {
	res := BuildResult{SHA: sha, BuildHash: cfg.BuildHash()}
	res.OutDir = filepath.Join(ws.DataDir(), "builds", sha+"-"+res.BuildHash[:12])
	_, ok := readMarker(res.OutDir+".done", res)
	return ok
}

// Estimate says how long building commit sha with cfg's build commands
// would take here: nothing when a build of it is cached, else the median
// duration of this data directory's finished builds of the same commands
// (other commits). ok is false when there is none to judge by.
func (b *Builder) Estimate(ws *workspace.Workspace, sha string, cfg *Config) (d time.Duration, ok bool) {
	res := BuildResult{SHA: sha, BuildHash: cfg.BuildHash()}
	builds := filepath.Join(ws.DataDir(), "builds")
	res.OutDir = filepath.Join(builds, sha+"-"+res.BuildHash[:12])
	if _, cached := readMarker(res.OutDir+".done", res); cached {
		return 0, true
	}
	markers, _ := filepath.Glob(filepath.Join(builds, "*-"+res.BuildHash[:12]+".done"))
	var ds []time.Duration
	for _, m := range markers {
		data, err := os.ReadFile(m)
		var rec buildRecord
		if err == nil && json.Unmarshal(data, &rec) == nil && rec.BuildHash == res.BuildHash && rec.Duration > 0 {
			ds = append(ds, rec.Duration)
		}
	}
	if len(ds) == 0 {
		return 0, false
	}
	slices.Sort(ds)
	return ds[len(ds)/2], true
}

// readMarker returns the record of a finished build of res's key whose
// outputs are still there.
func readMarker(path string, res BuildResult) (buildRecord, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return buildRecord{}, false
	}
	var rec buildRecord
	if json.Unmarshal(data, &rec) != nil || rec.SHA != res.SHA || rec.BuildHash != res.BuildHash {
		return buildRecord{}, false
	}
	if fi, err := os.Stat(res.OutDir); err != nil || !fi.IsDir() {
		return buildRecord{}, false
	}
	return rec, true
}

// writeMarker writes the marker whole or not at all.
func writeMarker(path string, rec buildRecord) error {
	if err := writeJSONFile(path, rec); err != nil {
		return fmt.Errorf("write build marker: %w", err)
	}
	return nil
}

// quoteArgs renders argv for a log line, quoting what a shell would
// need quoted.
func quoteArgs(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a == "" || strings.ContainsAny(a, " \t\n\"'\\$`|&;<>()*?[]{}#~!") {
			a = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
		}
		q[i] = a
	}
	return strings.Join(q, " ")
}

func short(sha string) string {
	if len(sha) > 12 {
		return sha[:12]
	}
	return sha
}

// A tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	max       int
	buf       []byte
	truncated bool
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.buf = append(t.buf, p...)
	if len(t.buf) > 2*t.max {
		t.buf = append(t.buf[:0], t.buf[len(t.buf)-t.max:]...)
		t.truncated = true
	}
	return len(p), nil
}

// String returns the kept output; cut output starts at a line start,
// after a line saying that earlier output was dropped.
func (t *tailBuffer) String() string {
	b, cut := t.buf, t.truncated
	if len(b) > t.max {
		b, cut = b[len(b)-t.max:], true
	}
	if !cut {
		return string(b)
	}
	if i := strings.IndexByte(string(b), '\n'); i >= 0 && i < len(b)-1 {
		b = b[i+1:]
	}
	return "[… earlier output in the build log]\n" + string(b)
}

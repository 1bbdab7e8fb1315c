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
// database URLs). Builder.PassEnv adds more. Builds also get PERFBOT_SRC,
// PERFBOT_OUT and execute.OwnerEnv.
var BuildEnv = []string{
	"PATH", "HOME", "TMPDIR", "LANG",
	"GOPATH", "GOCACHE", "GOMODCACHE", "GOFLAGS", "GOPROXY",
	"GOTOOLCHAIN", "GOPRIVATE", "GONOPROXY", "GONOSUMDB", "GOSUMDB",
}

// defaultTailBytes is how much build output a BuildResult keeps by default.
const defaultTailBytes = 32 << 10

// A Builder builds revisions with a Config's build commands and caches
// the outputs under the workspace's data directory:
//
//	builds/<sha>-<build hash[:12]>/       ${PERFBOT_OUT}, the outputs
//	builds/<sha>-<build hash[:12]>.done   the marker: JSON, written after success
//	builds/<sha>-<build hash[:12]>.log    the last attempt's whole output
//	builds/<sha>-<build hash[:12]>.lock   serializes builds of the key
//
// The zero Builder is ready to use. Builds of one key by several
// goroutines or processes run once; the others wait and reuse it.
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
// PassEnv, PERFBOT_SRC and PERFBOT_OUT. A build of the same commit and
// build commands that succeeded before is reused without running
// anything.
//
// A command that fails, times out or cannot start gives a result with
// Failed set and a nil error. Errors are for what is not the commit's
// fault: ctx done, the worktree or the data directory unusable.
func (b *Builder) Build(ctx context.Context, ws *workspace.Workspace, commit workspace.Commit, cfg *Config) (BuildResult, error) {
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
	return b.build(ctx, log, cfg, res, marker)
}

// build runs the commands; the caller holds the key's lock.
func (b *Builder) build(ctx context.Context, log *slog.Logger, cfg *Config, res BuildResult, marker string) (BuildResult, error) {
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
	env := b.environ(vars)
	start := time.Now()
	log.Info("build start", "commands", len(cfg.Build), "src", res.SrcDir, "out", res.OutDir)
	var commands [][]string
	for _, argv := range cfg.Build {
		argv = vars.ExpandAll(argv)
		commands = append(commands, argv)
		fmt.Fprintf(out, "$ %s\n", quoteArgs(argv))
		reason, err := runBuildCommand(ctx, res.SrcDir, argv, env, cfg.BuildTimeout, out)
		if err != nil {
			return fail(err)
		}
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

// environ returns the build commands' environment, execute.OwnerEnv last.
func (b *Builder) environ(vars Vars) []string {
	var env []string
	for _, name := range append(BuildEnv[:len(BuildEnv):len(BuildEnv)], b.PassEnv...) {
		if v, ok := os.LookupEnv(name); ok {
			env = append(env, name+"="+v)
		}
	}
	env = append(env, vars.Environ()...)
	if m := execute.OwnerMarker(); m != "" {
		env = append(env, m)
	}
	return env
}

func (b *Builder) logger() *slog.Logger {
	if b.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return b.Logger
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

// writeMarker writes the marker whole or not at all: a temporary file,
// synced, renamed into place.
func writeMarker(path string, rec buildRecord) error {
	data, err := json.MarshalIndent(rec, "", "\t")
	if err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(path), filepath.Base(path)+".tmp*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	_, err = f.Write(append(data, '\n'))
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, path)
	}
	if err != nil {
		os.Remove(tmp)
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

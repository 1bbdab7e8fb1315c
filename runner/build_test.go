package runner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/perfbot/perfbot/runner/execute"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// buildScript is a build.sh committed to test repositories: it counts its
// runs in the file named by its argument, copies a file of the commit
// into ${PERFBOT_OUT} and writes to both output streams.
const buildScript = `#!/bin/sh
set -e
echo ran >> "$1"
mkdir -p "$PERFBOT_OUT/bin"
cp payload.txt "$PERFBOT_OUT/bin/payload.txt"
echo "built from $PERFBOT_SRC"
echo "a warning on stderr" >&2
`

// buildFixture is a repository with two commits that carry build.sh, and
// a workspace on it.
type buildFixture struct {
	ws           *workspace.Workspace
	c1, c2       workspace.Commit
	counter      string
	dataDir      string
	repo         *workspacetest.Repo
	buildCommand []string
}

func newBuildFixture(t *testing.T) *buildFixture {
	t.Helper()
	ctx := context.Background()
	f := &buildFixture{repo: workspacetest.New(t), dataDir: t.TempDir()}
	f.counter = filepath.Join(t.TempDir(), "counter")
	f.buildCommand = []string{"./build.sh", f.counter}
	c1 := f.repo.Commit(t, "one", map[string]string{"build.sh": buildScript, "payload.txt": "payload one\n"})
	c2 := f.repo.Commit(t, "two", map[string]string{"payload.txt": "payload two\n"})
	var err error
	if f.ws, err = workspace.Open(ctx, f.repo.Dir, f.dataDir); err != nil {
		t.Fatal(err)
	}
	if f.c1, err = f.ws.Resolve(ctx, c1); err != nil {
		t.Fatal(err)
	}
	if f.c2, err = f.ws.Resolve(ctx, c2); err != nil {
		t.Fatal(err)
	}
	return f
}

// config returns a valid Config whose build is the given commands.
func (f *buildFixture) config(build ...[]string) *Config {
	c := DefaultConfig()
	c.Build = Steps(build...)
	return c
}

// runs returns how many times build.sh ran.
func (f *buildFixture) runs(t *testing.T) int {
	t.Helper()
	b, err := os.ReadFile(f.counter)
	if errors.Is(err, os.ErrNotExist) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(b), "ran\n")
}

func TestBuildRunsCommandsThenReusesTheCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newBuildFixture(t)
	cfg := f.config(f.buildCommand, []string{"sh", "-c", `echo second > "$1"`, "sh", "${PERFBOT_OUT}/second"})
	var b Builder

	res, err := b.Build(ctx, f.ws, f.c1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	wantOut := filepath.Join(f.dataDir, "builds", f.c1.SHA+"-"+cfg.BuildHash()[:12])
	wantSrc := filepath.Join(f.dataDir, "worktrees", f.ws.Key(), f.c1.SHA)
	if res.Failed || res.Cached || res.OutDir != wantOut || res.SrcDir != wantSrc || res.SHA != f.c1.SHA || res.BuildHash != cfg.BuildHash() {
		t.Fatalf("first Build = %+v\nwant a fresh success in %s from %s", res, wantOut, wantSrc)
	}
	wantFile(t, filepath.Join(res.OutDir, "bin", "payload.txt"), "payload one\n")
	wantFile(t, filepath.Join(res.OutDir, "second"), "second\n")
	for _, w := range []string{"$ ./build.sh " + f.counter + "\n", "built from " + wantSrc + "\n", "a warning on stderr\n",
		"$ sh -c 'echo second > \"$1\"' sh " + wantOut + "/second\n"} {
		if !strings.Contains(res.Output, w) {
			t.Errorf("Output lacks %q:\n%s", w, res.Output)
		}
	}
	if _, err := os.Stat(wantOut + ".done"); err != nil {
		t.Errorf("no marker: %v", err)
	}
	if log, err := os.ReadFile(res.LogFile); err != nil || string(log) != res.Output {
		t.Errorf("log file %s = %q, %v; want the output", res.LogFile, log, err)
	}
	if n := f.runs(t); n != 1 {
		t.Fatalf("build.sh ran %d times, want 1", n)
	}

	// Again: cached, nothing runs; a change to a benchmark does not matter.
	cfg.Benchmarks[0].Count = 3
	again, err := b.Build(ctx, f.ws, f.c1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !again.Cached || again.Failed || again.OutDir != res.OutDir || again.SrcDir != res.SrcDir || again.Output != res.Output {
		t.Errorf("second Build = %+v, want the cached result", again)
	}
	if n := f.runs(t); n != 1 {
		t.Errorf("build.sh ran %d times after a cached build, want 1", n)
	}

	// Another commit, or other build commands, build again.
	other, err := b.Build(ctx, f.ws, f.c2, cfg)
	if err != nil || other.Cached || other.Failed {
		t.Fatalf("Build(c2) = %+v, %v", other, err)
	}
	wantFile(t, filepath.Join(other.OutDir, "bin", "payload.txt"), "payload two\n")
	wantFile(t, filepath.Join(res.OutDir, "bin", "payload.txt"), "payload one\n")
	changed := f.config(f.buildCommand)
	if r, err := b.Build(ctx, f.ws, f.c1, changed); err != nil || r.Cached || r.OutDir == res.OutDir {
		t.Errorf("Build with other commands = %+v, %v; want a new build elsewhere", r, err)
	}
	if n := f.runs(t); n != 3 {
		t.Errorf("build.sh ran %d times, want 3", n)
	}
}

func TestBuildFailureIsAResultWithTheOutputTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newBuildFixture(t)
	b := Builder{TailBytes: 200}
	script := `for i in $(seq 1 100); do echo "line $i"; done; echo "compile error: x.go:3" >&2; exit 3`
	cfg := f.config(f.buildCommand, []string{"sh", "-c", script}, []string{"touch", "${PERFBOT_OUT}/never"})
	res, err := b.Build(ctx, f.ws, f.c1, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !res.Failed || res.Cached || res.Reason != "exit status 3" || !reflect.DeepEqual(res.FailedCommand, []string{"sh", "-c", script}) {
		t.Fatalf("Build = %+v, want failed with exit status 3", res)
	}
	if !strings.HasPrefix(res.Output, "[… earlier output in the build log]\n") ||
		!strings.Contains(res.Output, "line 100\ncompile error: x.go:3\nperfbot: sh -c ") ||
		strings.Contains(res.Output, "line 1\n") || len(res.Output) > 250 {
		t.Errorf("Output is not the tail:\n%s", res.Output)
	}
	if log, _ := os.ReadFile(res.LogFile); !strings.Contains(string(log), "line 1\n") {
		t.Errorf("the log file lacks the beginning:\n%s", log)
	}
	if _, err := os.Stat(res.OutDir + ".done"); !os.IsNotExist(err) {
		t.Errorf("marker after a failure: %v", err)
	}
	if _, err := os.Stat(filepath.Join(res.OutDir, "never")); !os.IsNotExist(err) {
		t.Errorf("a command after the failed one ran: %v", err)
	}
	// Not cached: the next Build runs again.
	if _, err := b.Build(ctx, f.ws, f.c1, cfg); err != nil {
		t.Fatal(err)
	}
	if n := f.runs(t); n != 2 {
		t.Errorf("build.sh ran %d times, want 2", n)
	}

	// A missing program and a timeout are failures too.
	res, err = b.Build(ctx, f.ws, f.c1, f.config([]string{"no-such-program-perfbot"}))
	if err != nil || !res.Failed || !strings.Contains(res.Reason, "executable file not found") {
		t.Errorf("Build(missing program) = %+v, %v", res, err)
	}
	slow := f.config([]string{"sh", "-c", "sleep 30 & sleep 30; echo done"})
	slow.BuildTimeout = 300 * time.Millisecond
	start := time.Now()
	res, err = b.Build(ctx, f.ws, f.c1, slow)
	if err != nil || !res.Failed || res.Reason != "timed out after 300ms" || !strings.Contains(res.Output, "perfbot: sh -c ") {
		t.Errorf("Build(slow) = %+v, %v; want timed out", res, err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("a timed-out build took %v: its processes were not killed", d)
	}
}

func TestBuildCanceledIsAnError(t *testing.T) {
	t.Parallel()
	f := newBuildFixture(t)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	var b Builder
	res, err := b.Build(ctx, f.ws, f.c1, f.config([]string{"sleep", "30"}))
	if !errors.Is(err, context.DeadlineExceeded) || res.Failed {
		t.Errorf("Build = %+v, %v; want an error wrapping the context's", res, err)
	}
}

func TestBuildSeesOnlyAllowedEnvironment(t *testing.T) {
	// Not parallel: t.Setenv.
	t.Setenv("PERFBOT_TEST_SECRET", "hunter2")
	t.Setenv("GOFLAGS", "-mod=mod")
	t.Setenv("CUDA_HOME", "/opt/cuda")
	f := newBuildFixture(t)
	b := Builder{PassEnv: []string{"CUDA_HOME"}}
	res, err := b.Build(context.Background(), f.ws, f.c1, f.config([]string{"sh", "-c", `env > "$PERFBOT_OUT/env"`}))
	if err != nil || res.Failed {
		t.Fatalf("Build = %+v, %v", res, err)
	}
	data, err := os.ReadFile(filepath.Join(res.OutDir, "env"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		k, v, _ := strings.Cut(line, "=")
		env[k] = v
	}
	if strings.Contains(string(data), "hunter2") {
		t.Errorf("the build saw the secret:\n%s", data)
	}
	for k, v := range map[string]string{
		"PERFBOT_SRC": res.SrcDir, "PERFBOT_OUT": res.OutDir, "GOFLAGS": "-mod=mod",
		"CUDA_HOME": "/opt/cuda", "PATH": os.Getenv("PATH"), "MAKEFLAGS": fmt.Sprintf("-j%d", runtime.NumCPU()),
	} {
		if env[k] != v {
			t.Errorf("build env %s = %q, want %q", k, env[k], v)
		}
	}
	allowed := append(slices.Clone(BuildEnv), "CUDA_HOME", "PERFBOT_SRC", "PERFBOT_OUT", "MAKEFLAGS", execute.OwnerEnv,
		"PWD", "OLDPWD", "SHLVL", "_") // the last ones sh sets itself
	for k := range env {
		if !slices.Contains(allowed, k) {
			t.Errorf("build env has %s, which is not allowed", k)
		}
	}
}

func TestBuildConcurrentBuildsOfOneKeyRunOnce(t *testing.T) {
	t.Parallel()
	f := newBuildFixture(t)
	cfg := f.config(f.buildCommand, []string{"sleep", "0.3"})
	const n = 3
	results := make([]BuildResult, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			// Separate Builders and Workspaces, as separate processes have.
			ws, err := workspace.Open(context.Background(), f.repo.Dir, f.dataDir)
			if err != nil {
				errs[i] = err
				return
			}
			var b Builder
			results[i], errs[i] = b.Build(context.Background(), ws, f.c1, cfg)
		})
	}
	wg.Wait()
	cached := 0
	for i := range n {
		if errs[i] != nil || results[i].Failed || results[i].OutDir != results[0].OutDir {
			t.Errorf("Build %d = %+v, %v", i, results[i], errs[i])
		}
		if results[i].Cached {
			cached++
		}
	}
	if runs := f.runs(t); runs != 1 || cached != n-1 {
		t.Errorf("build.sh ran %d times and %d of %d results were cached; want 1 and %d", runs, cached, n, n-1)
	}
}

// TestBuildGoProgram is the one real go build: a small main built into
// ${PERFBOT_OUT} and run.
func TestBuildGoProgram(t *testing.T) {
	t.Parallel()
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command in PATH: ", err)
	}
	ctx := context.Background()
	repo := workspacetest.New(t)
	sha := repo.Commit(t, "hello", map[string]string{
		"go.mod": "module example.com/hello\n\ngo 1.22\n",
		"main.go": `package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Println("hello from", os.Args[1])
}
`,
	})
	ws, err := workspace.Open(ctx, repo.Dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	commit, err := ws.Resolve(ctx, sha)
	if err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	cfg.Build = Steps([]string{"go", "build", "-o", "${PERFBOT_OUT}/hello", "."})
	cfg.Benchmarks[0].Command = []string{"${PERFBOT_OUT}/hello", "${PERFBOT_SRC}"}
	cfg.Benchmarks[0].Args = nil
	var b Builder
	res, err := b.Build(ctx, ws, commit, cfg)
	if err != nil || res.Failed {
		t.Fatalf("Build = %+v, %v", res, err)
	}
	argv := cfg.Benchmarks[0].Argv(res.Vars())
	out, err := exec.Command(argv[0], argv[1:]...).CombinedOutput()
	if err != nil || string(out) != "hello from "+res.SrcDir+"\n" {
		t.Errorf("%q = %q, %v", argv, out, err)
	}
}

func TestTailBuffer(t *testing.T) {
	t.Parallel()
	tb := &tailBuffer{max: 10}
	tb.Write([]byte("abc\n"))
	if got := tb.String(); got != "abc\n" {
		t.Errorf("short output = %q", got)
	}
	for range 10 {
		tb.Write([]byte("0123\n"))
	}
	tb.Write([]byte("end\n"))
	if got := tb.String(); got != "[… earlier output in the build log]\n0123\nend\n" {
		t.Errorf("tail = %q", got)
	}
}

func wantFile(t *testing.T, path, want string) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil || string(b) != want {
		t.Errorf("%s = %q, %v; want %q", path, b, err, want)
	}
}

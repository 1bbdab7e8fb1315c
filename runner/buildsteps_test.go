package runner

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

// stepRepo is a repository whose build has a step that reads lib/ and
// Makefile and a program elsewhere (main.go), and a workspace on it.
type stepRepo struct {
	repo    *workspacetest.Repo
	ws      *workspace.Workspace
	dataDir string
	counter string // each step run appends its name to it
}

func newStepRepo(t *testing.T) *stepRepo {
	t.Helper()
	r := &stepRepo{repo: workspacetest.New(t), dataDir: t.TempDir(), counter: filepath.Join(t.TempDir(), "counter")}
	r.repo.Commit(t, "first", map[string]string{
		"lib/a.c":  "int a = 1;\n",
		"lib/b.h":  "#define B 1\n",
		"Makefile": "lib:\n",
		"main.go":  "package main\n",
		"docs/x":   "docs\n",
	})
	var err error
	if r.ws, err = workspace.Open(context.Background(), r.repo.Dir, r.dataDir); err != nil {
		t.Fatal(err)
	}
	return r
}

// commit commits files and resolves the commit.
func (r *stepRepo) commit(t *testing.T, msg string, files map[string]string) workspace.Commit {
	t.Helper()
	sha := r.repo.Commit(t, msg, files)
	c, err := r.ws.Resolve(context.Background(), sha)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// runs returns how many times each step name was appended to the counter.
func (r *stepRepo) runs(t *testing.T) map[string]int {
	t.Helper()
	b, err := os.ReadFile(r.counter)
	if errors.Is(err, os.ErrNotExist) {
		return map[string]int{}
	}
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, line := range strings.Fields(string(b)) {
		n[line]++
	}
	return n
}

// libStep is a declared step: it counts its runs as "lib", and writes
// lib/a.c and Makefile, and the list of files it sees, to lib.out.
func (r *stepRepo) libStep(inputs ...string) BuildStep {
	return BuildStep{
		Run: []string{"sh", "-c", `echo lib >> "$1"; mkdir -p "$PERFBOT_OUT/lib"; cat lib/a.c Makefile > "$PERFBOT_OUT/lib/lib.out"; ` +
			`find . -type f | sort > "$PERFBOT_OUT/lib/seen.txt"; echo scratch > "$PERFBOT_OUT/scratch"`, "sh", r.counter},
		Inputs:  inputs,
		Outputs: []string{"lib/"},
	}
}

// goStep is an undeclared step: it counts its runs as "go".
func (r *stepRepo) goStep() BuildStep {
	return BuildStep{Run: []string{"sh", "-c", `echo go >> "$1"; cat main.go > "${PERFBOT_OUT}/main.out"`, "sh", r.counter}}
}

func stepConfig(steps ...BuildStep) *Config {
	c := DefaultConfig()
	c.Build = steps
	return c
}

func TestDeclaredStepIsReusedWhileItsInputsAreTheSameAndRunsWhenOneChanges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newStepRepo(t)
	cfg := stepConfig(r.libStep("lib/", "Makefile"), r.goStep())
	var b Builder
	build := func(c workspace.Commit) BuildResult {
		t.Helper()
		res, err := b.Build(ctx, r.ws, c, cfg)
		if err != nil || res.Failed {
			t.Fatalf("Build(%s) = %+v, %v", c.Short(), res, err)
		}
		return res
	}
	want := func(what string, lib, goRuns int) {
		t.Helper()
		if got := r.runs(t); got["lib"] != lib || got["go"] != goRuns {
			t.Errorf("%s: the declared step ran %d times and the other %d; want %d and %d", what, got["lib"], got["go"], lib, goRuns)
		}
	}

	c1 := r.commit(t, "one", nil)
	res1 := build(c1)
	want("first build", 1, 1)
	wantFile(t, filepath.Join(res1.OutDir, "lib", "lib.out"), "int a = 1;\nlib:\n")
	// It ran on its inputs alone, in a directory of its own.
	wantFile(t, filepath.Join(res1.OutDir, "lib", "seen.txt"), "./Makefile\n./lib/a.c\n./lib/b.h\n")
	wantFile(t, filepath.Join(res1.OutDir, "main.out"), "package main\n")
	if _, err := os.Stat(filepath.Join(res1.OutDir, "scratch")); !os.IsNotExist(err) {
		t.Errorf("scratch, not among the outputs, reached ${PERFBOT_OUT}: %v", err)
	}
	if len(res1.Steps) != 1 || res1.Steps[0].Reused || res1.Steps[0].Index != 0 {
		t.Errorf("first build's steps %+v, want step 0 made", res1.Steps)
	}
	for _, w := range []string{"runs in a directory of its 3 input files alone", "not kept, not being in its outputs: scratch"} {
		if !strings.Contains(res1.Output, w) {
			t.Errorf("build output lacks %q:\n%s", w, res1.Output)
		}
	}

	// A change elsewhere (main.go, docs/): reused, its outputs copied.
	c2 := r.commit(t, "go only", map[string]string{"main.go": "package main // two\n", "docs/x": "more docs\n"})
	res2 := build(c2)
	want("a change elsewhere", 1, 2)
	wantFile(t, filepath.Join(res2.OutDir, "lib", "lib.out"), "int a = 1;\nlib:\n")
	wantFile(t, filepath.Join(res2.OutDir, "main.out"), "package main // two\n")
	if len(res2.Steps) != 1 || !res2.Steps[0].Reused || res2.Steps[0].BuiltFor != c1.SHA || res2.Steps[0].Key != res1.Steps[0].Key {
		t.Errorf("second build's steps %+v, want step 0 reused from %s", res2.Steps, c1.Short())
	}
	if !strings.Contains(res2.Output, "reused the outputs made for "+c1.Short()) {
		t.Errorf("build output does not say the step was reused:\n%s", res2.Output)
	}
	// The copy is the side's own: changing it leaves the cache alone.
	if err := os.WriteFile(filepath.Join(res2.OutDir, "lib", "lib.out"), []byte("changed by a later step\n"), 0o644); err != nil {
		t.Fatal(err)
	}

	// Every declared path counts: a file in lib/, then Makefile.
	c3 := r.commit(t, "header", map[string]string{"lib/b.h": "#define B 2\n"})
	build(c3)
	want("lib/b.h changed", 2, 3)
	c4 := r.commit(t, "makefile", map[string]string{"Makefile": "lib: a\n"})
	res4 := build(c4)
	want("Makefile changed", 3, 4)
	wantFile(t, filepath.Join(res4.OutDir, "lib", "lib.out"), "int a = 1;\nlib: a\n")
	// A new file under a declared directory counts too.
	c5 := r.commit(t, "new file", map[string]string{"lib/c.c": "int c;\n"})
	build(c5)
	want("lib/c.c added", 4, 5)

	// Back to the first inputs: the first outputs, whole, without running.
	c6 := r.commit(t, "revert", map[string]string{"lib/c.c": "", "Makefile": "lib:\n", "lib/b.h": "#define B 1\n"})
	res6 := build(c6)
	want("inputs as at first", 4, 6)
	wantFile(t, filepath.Join(res6.OutDir, "lib", "lib.out"), "int a = 1;\nlib:\n")
	if res6.Steps[0].BuiltFor != c1.SHA {
		t.Errorf("reverted build reused outputs made for %.7s, want %s", res6.Steps[0].BuiltFor, c1.Short())
	}
}

func TestUndeclaredStepIsNeverReusedAcrossRevisions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newStepRepo(t)
	cfg := stepConfig(r.goStep())
	var b Builder
	c1 := r.commit(t, "one", nil)
	c2 := r.commit(t, "docs only", map[string]string{"docs/x": "more\n"})
	c3 := r.commit(t, "empty", nil) // the same tree as c2
	for _, c := range []workspace.Commit{c1, c2, c3} {
		if res, err := b.Build(ctx, r.ws, c, cfg); err != nil || res.Failed || res.Cached || len(res.Steps) != 0 {
			t.Fatalf("Build(%s) = %+v, %v", c.Short(), res, err)
		}
	}
	if n := r.runs(t)["go"]; n != 3 {
		t.Errorf("the undeclared step ran %d times for 3 revisions (one with the same tree as another), want 3", n)
	}
	// The same revision again is the whole build's cache, as before.
	if res, err := b.Build(ctx, r.ws, c2, cfg); err != nil || !res.Cached {
		t.Errorf("Build(c2) again = %+v, %v; want cached", res, err)
	}
	if n := r.runs(t)["go"]; n != 3 {
		t.Errorf("the undeclared step ran %d times, want 3", n)
	}
}

func TestDeclaredStepGlobsAndExclusions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newStepRepo(t)
	// Every .c and .h file, Makefile, but not lib/b.h.
	cfg := stepConfig(r.libStep("**/*.c", "lib/*.h", "Makefile", "!lib/b.h"))
	var b Builder
	res, err := b.Build(ctx, r.ws, r.commit(t, "one", nil), cfg)
	if err != nil || res.Failed {
		t.Fatalf("Build = %+v, %v", res, err)
	}
	wantFile(t, filepath.Join(res.OutDir, "lib", "seen.txt"), "./Makefile\n./lib/a.c\n")
	// lib/b.h is left out: changing it reuses.
	if res, err = b.Build(ctx, r.ws, r.commit(t, "b.h", map[string]string{"lib/b.h": "#define B 3\n"}), cfg); err != nil || !res.Steps[0].Reused {
		t.Errorf("after a change to an excluded file: %+v, %v; want the step reused", res.Steps, err)
	}
	// A .c file anywhere is in.
	if res, err = b.Build(ctx, r.ws, r.commit(t, "deep", map[string]string{"x/y/z.c": "int z;\n"}), cfg); err != nil || res.Steps[0].Reused {
		t.Errorf("after adding x/y/z.c: %+v, %v; want the step run", res.Steps, err)
	}
	wantFile(t, filepath.Join(res.OutDir, "lib", "seen.txt"), "./Makefile\n./lib/a.c\n./x/y/z.c\n")
}

func TestSelectInputs(t *testing.T) {
	t.Parallel()
	var tree []workspace.TreeEntry
	for _, p := range []string{"Makefile", "cuda/a.cu", "cuda/perfbot_cuda.h", "cuda/gen/x.py", "go.mod", "cmd/perfbot/main.go", "runner/run.go", "docs/a.md"} {
		tree = append(tree, workspace.TreeEntry{Path: p, Mode: "100644", OID: strings.Repeat("0", 40)})
	}
	cases := []struct {
		inputs        []string
		want, missing []string
	}{
		{[]string{"cuda/", "Makefile"}, []string{"Makefile", "cuda/a.cu", "cuda/gen/x.py", "cuda/perfbot_cuda.h"}, nil},
		{[]string{"cuda", "Makefile"}, []string{"Makefile", "cuda/a.cu", "cuda/gen/x.py", "cuda/perfbot_cuda.h"}, nil},
		// Everything but cuda/, whose header the Go build includes.
		{[]string{".", "!cuda/", "cuda/perfbot_cuda.h"},
			[]string{"Makefile", "cmd/perfbot/main.go", "cuda/perfbot_cuda.h", "docs/a.md", "go.mod", "runner/run.go"}, nil},
		// The last entry that matches a file decides.
		{[]string{"cuda/perfbot_cuda.h", "!cuda/"}, nil, nil},
		{[]string{"**/*.go", "go.mod"}, []string{"cmd/perfbot/main.go", "go.mod", "runner/run.go"}, nil},
		{[]string{"cuda/*.cu", "c*/"}, []string{"cmd/perfbot/main.go", "cuda/a.cu", "cuda/gen/x.py", "cuda/perfbot_cuda.h"}, nil},
		{[]string{"cuda/*", "!cuda/gen"}, []string{"cuda/a.cu", "cuda/perfbot_cuda.h"}, nil},
		{[]string{"cuda/", "cudaa/", "*.rs", "!nothing/"}, []string{"cuda/a.cu", "cuda/gen/x.py", "cuda/perfbot_cuda.h"}, []string{"cudaa/", "*.rs"}},
		// A path is a whole element: cmd is not cmd/perfbot/main.go's "cm".
		{[]string{"cm", "cmd/perfbot/main.go/"}, []string{"cmd/perfbot/main.go"}, []string{"cm"}},
	}
	for _, tc := range cases {
		files, missing := selectInputs(tc.inputs, tree)
		var got []string
		for _, f := range files {
			got = append(got, f.Path)
		}
		if !slices.Equal(got, tc.want) || !slices.Equal(missing, tc.missing) {
			t.Errorf("selectInputs(%q) = %q, missing %q; want %q, missing %q", tc.inputs, got, missing, tc.want, tc.missing)
		}
	}
}

func TestBuildVerifyRunsAReusedStepAgainAndWarnsOfOtherBytes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	r := newStepRepo(t)
	var b Builder

	// Deterministic: checked at every reuse (build_verify: 1), no warning.
	same := stepConfig(r.libStep("lib/", "Makefile"))
	same.BuildVerify = 1
	if _, err := b.Build(ctx, r.ws, r.commit(t, "one", nil), same); err != nil {
		t.Fatal(err)
	}
	res, err := b.Build(ctx, r.ws, r.commit(t, "two", map[string]string{"main.go": "package main // 2\n"}), same)
	if err != nil || res.Failed {
		t.Fatalf("Build = %+v, %v", res, err)
	}
	if n := r.runs(t)["lib"]; n != 2 || len(res.Steps) != 1 || !res.Steps[0].Checked || len(res.Steps[0].Mismatch) != 0 || len(res.Warnings) != 0 {
		t.Errorf("checked reuse: the step ran %d times (want 2), steps %+v, warnings %q; want a check that found the same bytes", n, res.Steps, res.Warnings)
	}
	if !strings.Contains(res.Output, "the check made the same outputs, byte for byte") {
		t.Errorf("build output does not tell the check:\n%s", res.Output)
	}

	// A step whose output depends on what it does not declare (here, its
	// process id): the check's warning names the step and the file, and
	// the build uses the new bytes.
	noisy := stepConfig(BuildStep{
		Run:     []string{"sh", "-c", `mkdir -p "$PERFBOT_OUT/lib"; echo $$ > "$PERFBOT_OUT/lib/pid"; echo same > "$PERFBOT_OUT/lib/same"`},
		Inputs:  []string{"lib/"},
		Outputs: []string{"lib/"},
	})
	noisy.BuildVerify = 2
	c3 := r.commit(t, "three", map[string]string{"main.go": "package main // 3\n"})
	first, err := b.Build(ctx, r.ws, c3, noisy)
	if err != nil || first.Failed {
		t.Fatalf("Build = %+v, %v", first, err)
	}
	// Reuse 1 is not checked, reuse 2 is.
	reuse1, err := b.Build(ctx, r.ws, r.commit(t, "four", map[string]string{"main.go": "package main // 4\n"}), noisy)
	if err != nil || len(reuse1.Warnings) != 0 || reuse1.Steps[0].Checked || !reuse1.Steps[0].Reused {
		t.Fatalf("first reuse = %+v, %v; want it reused unchecked", reuse1.Steps, err)
	}
	reuse2, err := b.Build(ctx, r.ws, r.commit(t, "five", map[string]string{"main.go": "package main // 5\n"}), noisy)
	if err != nil || reuse2.Failed {
		t.Fatalf("Build = %+v, %v", reuse2, err)
	}
	if len(reuse2.Warnings) != 1 || !reuse2.Steps[0].Checked || !slices.Equal(reuse2.Steps[0].Mismatch, []string{"lib/pid"}) {
		t.Fatalf("second reuse: steps %+v, warnings %q; want a check that found lib/pid differs", reuse2.Steps, reuse2.Warnings)
	}
	w := reuse2.Warnings[0]
	for _, part := range []string{"build step build[0] (sh -c", "build_verify: 2", "made for " + short(c3.SHA), "(lib/pid differ)", "inputs: may leave out a file it reads"} {
		if !strings.Contains(w, part) {
			t.Errorf("warning %q lacks %q", w, part)
		}
	}
	pid1, _ := os.ReadFile(filepath.Join(first.OutDir, "lib", "pid"))
	pid2, _ := os.ReadFile(filepath.Join(reuse2.OutDir, "lib", "pid"))
	if len(pid2) == 0 || string(pid1) == string(pid2) {
		t.Errorf("the checked build's lib/pid is %q, the first's %q; want the new bytes", pid2, pid1)
	}
	// And the cache keeps them: the next reuse copies them.
	reuse3, err := b.Build(ctx, r.ws, r.commit(t, "six", map[string]string{"main.go": "package main // 6\n"}), noisy)
	if err != nil || !reuse3.Steps[0].Reused || reuse3.Steps[0].Checked {
		t.Fatalf("third reuse = %+v, %v", reuse3.Steps, err)
	}
	wantFile(t, filepath.Join(reuse3.OutDir, "lib", "pid"), string(pid2))
}

func TestDeclaredStepThatDoesNotMakeAnOutputFails(t *testing.T) {
	t.Parallel()
	r := newStepRepo(t)
	cfg := stepConfig(BuildStep{Run: []string{"true"}, Inputs: []string{"lib/"}, Outputs: []string{"lib.so"}})
	var b Builder
	res, err := b.Build(context.Background(), r.ws, r.commit(t, "one", nil), cfg)
	if err != nil || !res.Failed || !strings.Contains(res.Reason, "it did not make lib.so in ${PERFBOT_OUT}, which its outputs: declare") {
		t.Fatalf("Build = %+v, %v; want a failure that names lib.so", res, err)
	}
	// Nothing was cached for the step: the next build runs it again.
	if matches, _ := filepath.Glob(filepath.Join(r.dataDir, "builds", "steps", "*.done")); len(matches) != 0 {
		t.Errorf("a failed step left markers %q", matches)
	}
}

func TestDeclaredInputsMissingAtARevisionAreRefusedBeforeAnythingRuns(t *testing.T) {
	t.Parallel()
	r := newStepRepo(t)
	c := r.commit(t, "one", nil)
	cfg := stepConfig(r.goStep(), r.libStep("lib/", "cudaa/", "Makefile", "*.cu", "!gone/"))
	var b Builder
	_, err := b.Build(context.Background(), r.ws, c, cfg)
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Build = %v, want ErrInvalidConfig", err)
	}
	for _, part := range []string{
		`build[1] (sh -c`, `.inputs: "cudaa/" is not in commit ` + c.Short(),
		`.inputs: "*.cu" matches no file of commit ` + c.Short(),
	} {
		if !strings.Contains(err.Error(), part) {
			t.Errorf("error %q lacks %q", err, part)
		}
	}
	if strings.Contains(err.Error(), "gone/") {
		t.Errorf("error %q names !gone/: leaving out what is not there is no mistake", err)
	}
	if n := r.runs(t); len(n) != 0 {
		t.Errorf("steps ran: %v; want none, the first one included", n)
	}
}

func TestBuildStepsParseAndHash(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig([]byte(`
build:
  - [go, build, -o, "${PERFBOT_OUT}/perfbot", ./cmd/perfbot]
  - run: [make, cuda-lib, "BUILD=${PERFBOT_OUT}"]
    inputs: [cuda/, Makefile]
    outputs: [libperfbot_cuda.so]
    env: {MAKEFLAGS: -j3, CUDA_ARCH: sm_90}
  - {run: [sh, -c, "echo plain"]}
build_parallel: 1
build_verify: 20
benchmarks: [{name: b, command: ["${PERFBOT_OUT}/perfbot"]}]
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []BuildStep{
		{Run: []string{"go", "build", "-o", "${PERFBOT_OUT}/perfbot", "./cmd/perfbot"}},
		{Run: []string{"make", "cuda-lib", "BUILD=${PERFBOT_OUT}"}, Inputs: []string{"cuda/", "Makefile"}, Outputs: []string{"libperfbot_cuda.so"},
			Env: map[string]string{"MAKEFLAGS": "-j3", "CUDA_ARCH": "sm_90"}},
		{Run: []string{"sh", "-c", "echo plain"}},
	}
	if !reflect.DeepEqual(cfg.Build, want) || cfg.BuildParallel != 1 || cfg.BuildVerify != 20 {
		t.Errorf("Build = %+v, parallel %d, verify %d", cfg.Build, cfg.BuildParallel, cfg.BuildVerify)
	}
	// JSON: a plain step is the argument list, as before steps; both
	// forms read back.
	data, err := json.Marshal(cfg.Build)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(data), `[["go","build","-o","${PERFBOT_OUT}/perfbot","./cmd/perfbot"],{"run":["make"`) ||
		!strings.HasSuffix(string(data), `,["sh","-c","echo plain"]]`) {
		t.Errorf("JSON %s", data)
	}
	var back []BuildStep
	if err := json.Unmarshal(data, &back); err != nil || !reflect.DeepEqual(back, want) {
		t.Errorf("JSON read back %+v, %v", back, err)
	}
	// build_parallel and build_verify decide when and how often, not
	// what: the hashes stay.
	other := *cfg
	other.BuildParallel, other.BuildVerify = 0, 0
	if other.Hash() != cfg.Hash() || other.BuildHash() != cfg.BuildHash() {
		t.Error("build_parallel or build_verify changed a hash")
	}
	// The declarations are part of what is built.
	other.Build = slices.Clone(cfg.Build)
	other.Build[1].Inputs = []string{"cuda/"}
	if other.BuildHash() == cfg.BuildHash() {
		t.Error("other inputs, same BuildHash")
	}
}

func TestBuildStepEnvironmentKeepsAMakeflagsOfItsOwn(t *testing.T) {
	t.Parallel()
	var b Builder
	vars := Vars{Src: "/s", Out: "/o"}
	count := func(env []string, kv string) int {
		n := 0
		for _, e := range env {
			if strings.HasPrefix(e, "MAKEFLAGS=") {
				n++
				if e != kv {
					return -1
				}
			}
		}
		return n
	}
	if env := b.environ(BuildStep{Run: []string{"make"}}, vars, 8); count(env, "MAKEFLAGS=-j8") != 1 {
		t.Errorf("environ = %q, want MAKEFLAGS=-j8 once", env)
	}
	if env := b.environ(BuildStep{Run: []string{"make"}}, vars, 0); count(env, "MAKEFLAGS=-j1") != 1 {
		t.Errorf("environ = %q, want MAKEFLAGS=-j1 once", env)
	}
	st := BuildStep{Run: []string{"make"}, Env: map[string]string{"MAKEFLAGS": "-j2 --output-sync", "OUT": "${PERFBOT_OUT}/x"}}
	env := b.environ(st, vars, 8)
	if count(env, "MAKEFLAGS=-j2 --output-sync") != 1 || !slices.Contains(env, "OUT=/o/x") {
		t.Errorf("environ = %q, want the step's MAKEFLAGS alone, and its env expanded", env)
	}
}

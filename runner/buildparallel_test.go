package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// A buildSpan is one build's interval as its step logged it.
type buildSpan struct {
	start, end float64
	makeflags  string
}

// timedBuildConfig is a config whose build step logs, to log, the
// worktree it builds, its MAKEFLAGS and its start and end times, a
// second apart; or, when the worktree holds a file named fail, fails
// (exit status 1) 0.3 s after it starts.
func timedBuildConfig(log, extra string) string {
	end := fmt.Sprintf(`echo "${PERFBOT_SRC} end $(date +%%s.%%N) $MAKEFLAGS" >> %s`, log)
	step := fmt.Sprintf(`echo "${PERFBOT_SRC} start $(date +%%s.%%N) $MAKEFLAGS" >> %s; `+
		`if test -e fail; then sleep 0.3; %s; exit 1; fi; sleep 1; %s; touch "${PERFBOT_OUT}/built"`, log, end, end)
	b, _ := json.Marshal(step)
	s, _ := json.Marshal(`echo "BenchmarkX/phase=total 1 $((1000 + $$ % 7)) ns/op"`)
	return fmt.Sprintf("build:\n  - [sh, -c, %s]\nbenchmarks:\n  - name: sh\n    command: [sh, -c, %s]\n"+
		"count: 2\nwarmup: 0\nmax_count: 2\ntimeout: 30s\n%s", b, s, extra)
}

// buildSpans reads the log timedBuildConfig's step writes: each commit's
// span, by the commit's SHA (the worktree's name).
func buildSpans(t *testing.T, log string) map[string]buildSpan {
	t.Helper()
	data, err := os.ReadFile(log)
	if err != nil {
		t.Fatal(err)
	}
	spans := map[string]buildSpan{}
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			t.Fatalf("log line %q", line)
		}
		at, err := strconv.ParseFloat(f[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		sha := filepath.Base(f[0])
		sp := spans[sha]
		if f[1] == "start" {
			sp.start = at
		} else {
			sp.end = at
		}
		if len(f) > 3 {
			sp.makeflags = f[3]
		}
		spans[sha] = sp
	}
	return spans
}

func TestBaseAndHeadBuildAtOnceUnlessBuildParallelIsOne(t *testing.T) {
	t.Parallel()
	cpus := runtime.NumCPU()
	cases := []struct {
		setting   string
		overlap   bool
		makeflags string
	}{
		// This machine may have fewer than 4 CPUs, where the default is
		// one at a time: 2 asks for both at once.
		{"build_parallel: 2\n", true, fmt.Sprintf("-j%d", max(1, cpus/2))},
		{"build_parallel: 1\n", false, fmt.Sprintf("-j%d", cpus)},
	}
	for _, tc := range cases {
		t.Run(strings.TrimSpace(tc.setting), func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "builds.log")
			repo := workspacetest.New(t)
			base := repo.Commit(t, "base", map[string]string{".perfbot.yml": timedBuildConfig(log, tc.setting)})
			head := repo.Commit(t, "head", map[string]string{"README": "head\n"})
			r := newPRRunner(t)
			res, err := r.Compare(context.Background(), CompareRequest{Source: repo.Dir, Base: base, Head: head})
			if err != nil {
				t.Fatal(err)
			}
			if res.FailedRuns != 0 || len(res.BaseRuns) != 2 || len(res.HeadRuns) != 2 {
				t.Fatalf("%d failed runs, %d base and %d head runs; want 2 ok runs a side", res.FailedRuns, len(res.BaseRuns), len(res.HeadRuns))
			}
			spans := buildSpans(t, log)
			b, h := spans[base], spans[head]
			if len(spans) != 2 || b.end == 0 || h.end == 0 {
				t.Fatalf("build spans %+v; want one for each of %.7s and %.7s", spans, base, head)
			}
			overlap := b.start < h.end && h.start < b.end
			if overlap != tc.overlap {
				t.Errorf("base built %.3f–%.3f, head %.3f–%.3f: overlap = %v, want %v",
					b.start, b.end, h.start, h.end, overlap, tc.overlap)
			}
			if !tc.overlap && b.end > h.start {
				t.Errorf("one at a time, base (%.3f–%.3f) did not build before head (%.3f–%.3f)", b.start, b.end, h.start, h.end)
			}
			if b.makeflags != tc.makeflags || h.makeflags != tc.makeflags {
				t.Errorf("MAKEFLAGS base %q, head %q; want %q on this %d-CPU machine", b.makeflags, h.makeflags, tc.makeflags, cpus)
			}
		})
	}
}

func TestABuildThatFailsOnOneSideDoesNotStopTheOther(t *testing.T) {
	t.Parallel()
	for _, failing := range []string{"base", "head"} {
		t.Run(failing, func(t *testing.T) {
			t.Parallel()
			log := filepath.Join(t.TempDir(), "builds.log")
			repo := workspacetest.New(t)
			files := map[string]string{".perfbot.yml": timedBuildConfig(log, "build_parallel: 2\n")}
			if failing == "base" {
				files["fail"] = "x\n"
			}
			base := repo.Commit(t, "base", files)
			head := repo.Commit(t, "head", map[string]string{"fail": "x\n"})
			if failing == "base" {
				head = repo.Commit(t, "head", map[string]string{"fail": ""})
			}
			r := newPRRunner(t)
			ctx := context.Background()
			res, err := r.Compare(ctx, CompareRequest{Source: repo.Dir, Base: base, Head: head})
			if err != nil {
				t.Fatal(err)
			}
			bad, good := head, base
			if failing == "base" {
				bad, good = base, head
			}
			// The failure came first, while the other side built, which
			// went on to its end.
			spans := buildSpans(t, log)
			if g, f := spans[good], spans[bad]; f.end == 0 || g.end == 0 || !(g.start < f.end && f.end < g.end) {
				t.Errorf("the %s's build failed %.3f–%.3f, the other built %.3f–%.3f; want the failure while the other built, and the other whole",
					failing, f.start, f.end, g.start, g.end)
			}
			outs, _ := filepath.Glob(filepath.Join(r.DataDir, "builds", good+"-*", "built"))
			markers, _ := filepath.Glob(filepath.Join(r.DataDir, "builds", "*.done"))
			if len(outs) != 1 || len(markers) != 1 || !strings.Contains(markers[0], good) {
				t.Errorf("the %s side's build left outputs %q and markers %q; want the other side's build done", failing, outs, markers)
			}
			// The failure is recorded as the failing side's run, as before.
			runs, err := r.Store.(*store.DB).Runs(ctx, store.RunQuery{Repo: repo.Dir})
			if err != nil {
				t.Fatal(err)
			}
			if len(runs) != 1 || runs[0].Commit.SHA != bad || runs[0].Status != analysis.StatusBuildFailed || !strings.Contains(runs[0].Detail, "exit status 1") {
				for _, run := range runs {
					t.Logf("stored run of %.7s: %s %q", run.Commit.SHA, run.Status, run.Detail)
				}
				t.Errorf("%d stored runs; want one build-failed run of the %s (%.7s)", len(runs), failing, bad)
			}
			if res.Report.Verdict != analysis.VerdictError || res.FailedRuns != 1 {
				t.Errorf("verdict %s, %d failed runs; want error and 1", res.Report.Verdict, res.FailedRuns)
			}
		})
	}
}

func TestCompareRefusesDeclaredInputsThatAreNotThereBeforeBuilding(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "counter")
	cfg := fmt.Sprintf(`build:
  - [sh, -c, "echo plain >> %[1]s"]
  - run: [sh, -c, "echo lib >> %[1]s; touch ${PERFBOT_OUT}/lib.so"]
    inputs: [lib/, Makefile]
    outputs: [lib.so]
benchmarks:
  - {name: sh, command: [sh, -c, "echo BenchmarkX 1 1 ns/op"]}
`, counter)
	repo := workspacetest.New(t)
	base := repo.Commit(t, "base", map[string]string{".perfbot.yml": cfg, "lib/a.c": "a\n", "Makefile": "x\n"})
	head := repo.Commit(t, "head drops Makefile", map[string]string{"Makefile": ""})
	r := newPRRunner(t)
	_, err := r.Compare(context.Background(), CompareRequest{Source: repo.Dir, Base: base, Head: head})
	if !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("Compare = %v, want ErrInvalidConfig", err)
	}
	want := `head: build[1] (sh -c 'echo lib >> ` + counter + `; touch ${PERFBOT_OUT}/lib.so').inputs: "Makefile" is not in commit ` + short(head)
	if !strings.Contains(err.Error(), want) {
		t.Errorf("error %q\nwant it to contain %q", err, want)
	}
	if _, err := os.Stat(counter); !os.IsNotExist(err) {
		t.Errorf("a build step ran (%v); want nothing built", err)
	}
	if builds, _ := filepath.Glob(filepath.Join(r.DataDir, "builds", "*")); len(builds) != 0 {
		t.Errorf("builds left %q; want none", builds)
	}
}

func TestBuildsAtOnce(t *testing.T) {
	t.Parallel()
	cases := []struct{ setting, cpus, n, want int }{
		{0, 16, 2, 2}, // the default on a GPU host: base and head at once
		{0, 4, 2, 2},
		{0, 3, 2, 1}, // too few CPUs: one at a time
		{0, 2, 2, 1},
		{1, 16, 2, 1}, // the setting forces one at a time
		{2, 2, 2, 2},  // or two on a small host
		{4, 16, 2, 2}, // never more than there are
		{0, 16, 5, 5}, // a bisection step's probes
		{3, 16, 5, 3},
		{0, 16, 0, 1},
	}
	for _, tc := range cases {
		if got := buildsAtOnce(tc.setting, tc.cpus, tc.n); got != tc.want {
			t.Errorf("buildsAtOnce(%d, %d CPUs, %d) = %d, want %d", tc.setting, tc.cpus, tc.n, got, tc.want)
		}
	}
}

// Base and head of a change outside a declared step's inputs build at
// once, and the step runs once: the other side waits and reuses it.
func TestBothSidesOfAChangeElsewhereRunADeclaredStepOnce(t *testing.T) {
	t.Parallel()
	counter := filepath.Join(t.TempDir(), "counter")
	lib, _ := json.Marshal(`echo lib >> ` + counter + `; sleep 0.5; cat lib/a.c > "${PERFBOT_OUT}/lib.out"`)
	other, _ := json.Marshal(`echo other >> ` + counter)
	bench, _ := json.Marshal(`echo "BenchmarkX/phase=total 1 $((1000 + $$ % 7)) ns/op"`)
	cfg := fmt.Sprintf("build:\n  - [sh, -c, %s]\n  - run: [sh, -c, %s]\n    inputs: [lib/]\n    outputs: [lib.out]\n"+
		"build_parallel: 2\nbenchmarks:\n  - name: sh\n    command: [sh, -c, %s]\ncount: 2\nwarmup: 0\nmax_count: 2\ntimeout: 30s\n", other, lib, bench)
	repo := workspacetest.New(t)
	base := repo.Commit(t, "base", map[string]string{".perfbot.yml": cfg, "lib/a.c": "int a;\n", "main.go": "package main\n"})
	head := repo.Commit(t, "head: Go only", map[string]string{"main.go": "package main // faster\n"})
	r := newPRRunner(t)
	res, err := r.Compare(context.Background(), CompareRequest{Source: repo.Dir, Base: base, Head: head})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(counter)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Fields(string(data)); strings.Count(string(data), "lib") != 1 || strings.Count(string(data), "other") != 2 {
		t.Errorf("steps ran %q; want the declared one once and the other once a side", got)
	}
	for _, sha := range []string{base, head} {
		outs, _ := filepath.Glob(filepath.Join(r.DataDir, "builds", sha+"-*", "lib.out"))
		if len(outs) != 1 {
			t.Errorf("%.7s: lib.out %q; want one", sha, outs)
			continue
		}
		wantFile(t, outs[0], "int a;\n")
	}
	if res.FailedRuns != 0 || strings.Contains(strings.Join(res.Report.Warnings, "\n"), "build step") {
		t.Errorf("%d failed runs, warnings %q; want none, and no word of the build", res.FailedRuns, res.Report.Warnings)
	}
}

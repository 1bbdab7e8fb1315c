package execute

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/NVIDIA/go-nvml/pkg/nvml"

	"github.com/perfbot/perfbot/analysis"
)

// This file tests RunCallgrind: the callgrind format, the pairing of
// spans, and real runs of the spans helper under valgrind.

// spansProgram marks a total span holding two phase spans, a and b,
// each spinning as many iterations as its variable says, prints one
// line per span in the order they ended, as perfbot prove does, and
// marks one span more when PERFBOT_EXTRA_SPAN is set (a program that
// breaks the contract). It is built on its own: go test links its test
// binaries without a symbol table, and callgrind finds the markers by
// their symbols.
const spansProgram = `package main

import (
	"fmt"
	"os"
	"strconv"
)

//go:noinline
func perfbotSpanBegin() {}

//go:noinline
func perfbotSpanEnd() {}

var sink uint64

//go:noinline
func spin(n int) {
	x := sink | 1
	for range n {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

func iters(name string) int {
	n, err := strconv.Atoi(os.Getenv(name))
	if err != nil {
		return 100000
	}
	return n
}

func main() {
	a, b := iters("PERFBOT_ITERS_A"), iters("PERFBOT_ITERS_B")
	perfbotSpanBegin() // total
	perfbotSpanBegin()
	spin(a)
	perfbotSpanEnd()
	spin(1000) // between the phases: total's only
	perfbotSpanBegin()
	spin(b)
	perfbotSpanEnd()
	perfbotSpanEnd()
	if os.Getenv("PERFBOT_EXTRA_SPAN") != "" {
		perfbotSpanBegin()
		perfbotSpanEnd()
	}
	fmt.Println("BenchmarkSpans/phase=a 1 1000 ns/op")
	fmt.Println("BenchmarkSpans/phase=b 1 1000 ns/op")
	fmt.Println("BenchmarkSpans/phase=total 1 2000 ns/op")
}
`

var (
	spansOnce sync.Once
	spansBin  string
	spansErr  error
)

// spansBinary builds spansProgram once.
func spansBinary(t *testing.T) string {
	t.Helper()
	spansOnce.Do(func() {
		dir, err := os.MkdirTemp("", "perfbot-spans-*")
		if err != nil {
			spansErr = err
			return
		}
		files := map[string]string{"go.mod": "module example.com/spans\n\ngo 1.26\n", "main.go": spansProgram}
		for name, body := range files {
			if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
				spansErr = err
				return
			}
		}
		bin := filepath.Join(dir, "spans")
		cmd := exec.Command("go", "build", "-o", bin, ".")
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			spansErr = fmt.Errorf("go build: %v\n%s", err, out)
			return
		}
		spansBin = bin
	})
	if spansErr != nil {
		t.Fatalf("build the spans program: %v", spansErr)
	}
	return spansBin
}

// needValgrind skips a test when valgrind is missing, unless
// PERFBOT_REQUIRE_VALGRIND is set (make test sets it: every machine the
// project's CI runs on has valgrind), when it fails instead.
func needValgrind(t *testing.T) {
	t.Helper()
	if _, err := LookValgrind(nil); err != nil {
		if os.Getenv("PERFBOT_REQUIRE_VALGRIND") != "" {
			t.Fatalf("PERFBOT_REQUIRE_VALGRIND is set: %v", err)
		}
		t.Skipf("no valgrind: %v", err)
	}
}

// runSpans runs the spans helper under callgrind with env.
func runSpans(t *testing.T, env ...string) Result {
	t.Helper()
	spec := Spec{
		Args:    []string{spansBinary(t)},
		Env:     env,
		Timeout: 2 * time.Minute,
		Name:    "spans",
	}
	res, err := runCallgrind(context.Background(), spec, nvml.New())
	if err != nil {
		t.Fatalf("RunCallgrind: %v", err)
	}
	if res.Run.Status != analysis.StatusOK || res.Run.Tool != analysis.ToolCallgrind {
		t.Fatalf("status %s, tool %q, want ok and callgrind: %s", res.Run.Status, res.Run.Tool, res.Run.Detail)
	}
	return res
}

// simValues returns a callgrind run's simulated samples by phase ("" for
// the process's).
func simValues(t *testing.T, res Result) map[string]float64 {
	t.Helper()
	out := map[string]float64{}
	for _, s := range res.Run.Samples {
		switch s.Unit {
		case analysis.SimInstructionsUnit:
			if s.Benchmark != "Spans" {
				t.Errorf("sample of benchmark %q, want Spans", s.Benchmark)
			}
			out[s.Phase] = s.Value
		case analysis.SimProcessInstructionsUnit:
			out[""] = s.Value
		case analysis.SimWallUnit:
			if s.Value <= 0 || s.Benchmark != ProcessBenchmark+"/benchmark=spans" {
				t.Errorf("wall sample %+v, want a positive one of the named process", s)
			}
		default:
			t.Errorf("sample %+v: a callgrind run carries simulated samples only", s)
		}
	}
	return out
}

func TestRunCallgrindCountsEachSpanAndRepeatsExactly(t *testing.T) {
	t.Parallel()
	needValgrind(t)
	env := []string{"PERFBOT_ITERS_A=100000", "PERFBOT_ITERS_B=300000"}
	first := simValues(t, runSpans(t, env...))
	second := simValues(t, runSpans(t, env...))
	t.Logf("first %v, second %v", first, second)
	for _, phase := range []string{"a", "b", "total"} {
		if first[phase] != second[phase] {
			t.Errorf("%s: %.0f then %.0f instructions; the same binary and inputs must count the same", phase, first[phase], second[phase])
		}
	}
	// spin's loop is a handful of instructions an iteration: b spins 3
	// times as long as a.
	a, b, total := first["a"], first["b"], first["total"]
	if a < 2*100_000 || a > 10*100_000 || math.Abs(b/a-3) > 0.01 {
		t.Errorf("a %.0f, b %.0f instructions; want a few per iteration, b three times a", a, b)
	}
	// total holds both phases and what ran between them (1,000
	// iterations), and the process holds total.
	if gap := total - a - b; gap < 1000 || gap > 20_000 {
		t.Errorf("total %.0f - a - b = %.0f, want the 1,000 iterations between the phases", total, gap)
	}
	if first[""] <= total {
		t.Errorf("process %.0f ≤ total %.0f", first[""], total)
	}
}

func TestRunCallgrindPlantedWorkChangesOnlyItsSpan(t *testing.T) {
	t.Parallel()
	needValgrind(t)
	base := simValues(t, runSpans(t, "PERFBOT_ITERS_A=100000", "PERFBOT_ITERS_B=100000"))
	head := simValues(t, runSpans(t, "PERFBOT_ITERS_A=100000", "PERFBOT_ITERS_B=110000"))
	if base["a"] != head["a"] {
		t.Errorf("a: %.0f then %.0f; b's extra work must not reach a", base["a"], head["a"])
	}
	perIter := base["b"] / 100_000
	if d := head["b"] - base["b"]; math.Abs(d-10_000*perIter) > 100 {
		t.Errorf("b grew by %.0f instructions, want 10,000 iterations' %.0f", d, 10_000*perIter)
	}
	if d := (head["total"] - head["b"]) - (base["total"] - base["b"]); d != 0 {
		t.Errorf("total without b changed by %.0f instructions, want 0", d)
	}
}

func TestRunCallgrindKeepsTheProcessCountWhenSpansDoNotMatchLines(t *testing.T) {
	t.Parallel()
	needValgrind(t)
	res := runSpans(t, "PERFBOT_EXTRA_SPAN=1")
	v := simValues(t, res)
	if len(v) != 1 || v[""] == 0 {
		t.Errorf("samples %v, want the process's count only", v)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "marked 4 spans but printed 3 benchmark lines") {
		t.Errorf("warnings %q, want one about 4 spans and 3 lines", res.Warnings)
	}
}

func TestRunCallgrindWithoutValgrindSaysHowToInstallIt(t *testing.T) {
	t.Parallel()
	_, err := runCallgrind(context.Background(), Spec{Args: []string{"true"}, Env: []string{"PATH=" + t.TempDir()}}, nvml.New())
	if !errors.Is(err, ErrNoValgrind) || !strings.Contains(err.Error(), "apt-get install valgrind") {
		t.Errorf("err %v, want ErrNoValgrind with how to install it", err)
	}
}

func TestCallgrindEnvKeepsTheBenchmarksGODEBUGAndGC(t *testing.T) {
	t.Parallel()
	env := callgrindEnv([]string{"GODEBUG=madvdontneed=0", "GOGC=200"})
	if env[0] != "GODEBUG=madvdontneed=0,asyncpreemptoff=1,memprofilerate=0,cpu.rdtscp=off" || env[1] != "GOMAXPROCS=1" {
		t.Errorf("env %q, want the benchmark's GODEBUG extended and GOMAXPROCS=1", env)
	}
	if hasEnv(env, "GOGC") {
		t.Errorf("env %q sets GOGC, which the benchmark set", env)
	}
	if !hasEnv(env, "GOMEMLIMIT") {
		t.Errorf("env %q sets no GOMEMLIMIT", env)
	}
	plain := callgrindEnv(nil)
	if !reflect.DeepEqual(plain[:3], []string{"GODEBUG=asyncpreemptoff=1,memprofilerate=0,cpu.rdtscp=off", "GOMAXPROCS=1", "GOGC=off"}) {
		t.Errorf("env %q", plain)
	}
}

// callgrindFile is a part as callgrind writes one, with name
// compression, a call's inclusive cost and a runtime function.
const callgrindFile = `# callgrind format
version: 1
creator: callgrind-3.19.0
pid: 1
cmd:  ./prove
part: 3

desc: Trigger: --dump-before=github.com/perfbot/perfbot/prover.perfbotSpanEnd

positions: line
events: Ir
summary: 1170

ob=(1) /tmp/prove
fl=(1) /src/r1cs/lc.go
fn=(1) github.com/perfbot/perfbot/prover/r1cs.evalTerms
10 100
+2 200
cfi=(2) /usr/local/go/src/runtime/mpagealloc.go
cfn=(2) runtime.(*pageAlloc).find
calls=3 40
* 9999
* 300
fl=(2)
fn=(2)
40 50
+1 20
fn=(3) runtime.memmove
5 400
fn=(4) internal/runtime/maps.(*Map).getWithKeySmall
7 60
fn=(5) internal/runtime/syscall/linux.Syscall6
7 30
fn=(1)
12 10
fn=(6) runtime.sysmon'2
9 0
`

func TestParseCallgrindPartCountsEachCostOnceAndLeavesOutRuntimeBookkeeping(t *testing.T) {
	t.Parallel()
	p, err := parseCallgrindPart(strings.NewReader(callgrindFile))
	if err != nil {
		t.Fatal(err)
	}
	// evalTerms 100+200+300+10, pageAlloc.find 50+20 (the call's
	// inclusive 9999 not counted again), memmove 400, maps 60, Syscall6 30:
	// 1170, the summary; overhead: find's 70 and Syscall6's 30.
	want := callgrindPart{part: 3, trigger: "end", instructions: 1070, all: 1170, overhead: 100}
	if p != want {
		t.Errorf("part %+v, want %+v", p, want)
	}
	for _, bad := range []string{"", "part: 1\nevents: Dr\n", "events: Ir\n", "part: 1\nevents: Ir\nfn=(1) f\n10 x\n"} {
		if _, err := parseCallgrindPart(strings.NewReader(bad)); err == nil {
			t.Errorf("parse %q: no error", bad)
		}
	}
}

func TestRuntimeOverheadKeepsTheProgramsOwnWork(t *testing.T) {
	t.Parallel()
	for fn, want := range map[string]bool{
		"runtime.(*pageAlloc).find":                     true,
		"runtime.sysmon":                                true,
		"runtime.schedule'2":                            true,
		"internal/runtime/atomic.(*Uint32).Load":        true,
		"runtime.memmove":                               false,
		"runtime.mallocgc":                              false,
		"runtime.mallocgcSmallNoscan":                   false,
		"runtime.growslice":                             false,
		"internal/runtime/maps.(*Map).putSlot":          false,
		"runtime/pprof.Do":                              false,
		"github.com/perfbot/perfbot/prover.proveOnce":   false,
		"github.com/consensys/gnark-crypto/runtime.fix": false,
	} {
		if got := runtimeOverhead(fn); got != want {
			t.Errorf("runtimeOverhead(%q) = %v, want %v", fn, got, want)
		}
	}
}

func TestPairSpansNestsLikeBrackets(t *testing.T) {
	t.Parallel()
	part := func(trigger string, n uint64) callgrindPart { return callgrindPart{trigger: trigger, instructions: n} }
	// startup 1000 | total begins | 5 | a begins | 100 | a ends | 7 |
	// b begins | 300 | b ends | 11 | total ends | 13 (the end).
	parts := []callgrindPart{
		part("begin", 1000), part("begin", 5), part("end", 100), part("begin", 7),
		part("end", 300), part("end", 11), part("", 13),
	}
	spans, err := pairSpans(parts)
	if err != nil {
		t.Fatal(err)
	}
	if want := []uint64{100, 300, 5 + 100 + 7 + 300 + 11}; !reflect.DeepEqual(spans, want) {
		t.Errorf("spans %v, want %v (a, b, total, in the order they ended)", spans, want)
	}
	if _, err := pairSpans([]callgrindPart{part("end", 1)}); err == nil || !strings.Contains(err.Error(), "no span open") {
		t.Errorf("an end without a begin: %v", err)
	}
	if _, err := pairSpans([]callgrindPart{part("begin", 1), part("", 2)}); err == nil || !strings.Contains(err.Error(), "never ended") {
		t.Errorf("a begin without an end: %v", err)
	}
}

func TestReadCallgrindPartsOrdersByPart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	write := func(name string, part int, trigger string, cost int) {
		body := fmt.Sprintf("part: %d\ndesc: Trigger: %s\nevents: Ir\nfn=(1) main.f\n1 %d\n", part, trigger, cost)
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("callgrind.out.10", 10, "--dump-before=main.perfbotSpanEnd", 10)
	write("callgrind.out.2", 2, "--dump-before=main.perfbotSpanBegin", 2)
	write("callgrind.out", 11, "Program termination", 11)
	write("callgrind.out.1", 1, "--dump-before=main.perfbotSpanBegin", 1)
	parts, err := readCallgrindParts(dir)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range parts {
		got = append(got, fmt.Sprintf("%d:%s:%d", p.part, p.trigger, p.instructions))
	}
	if want := "1:begin:1 2:begin:2 10:end:10 11::11"; strings.Join(got, " ") != want {
		t.Errorf("parts %s, want %s", strings.Join(got, " "), want)
	}
}

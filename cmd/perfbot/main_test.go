package main

import (
	"bytes"
	"cmp"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/pprof/profile"
	"golang.org/x/perf/benchfmt"

	"github.com/perfbot/perfbot/prover"
)

var update = flag.Bool("update", false, "rewrite golden files under testdata/")

// perfbot runs the whole command in-process and returns its output and
// exit code.
func perfbot(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), exitCode(err)
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("read golden file (run go test -update to create it): %v", err)
	}
	if got != string(want) {
		t.Errorf("%s differs from %s (run go test ./cmd/perfbot -update if the change is intended)\n--- got:\n%s\n--- want:\n%s", name, path, got, want)
	}
}

func TestHelpMatchesGolden(t *testing.T) {
	t.Parallel()
	for name, args := range map[string][]string{
		"help-root":  {"--help"},
		"help-prove": {"prove", "--help"},
	} {
		out, errOut, code := perfbot(t, args...)
		if code != 0 || errOut != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, errOut)
		}
		golden(t, name, out)
	}
}

func TestBadInputExitsTwoWithAClearMessage(t *testing.T) {
	t.Parallel()
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"prove", "--constraints", "0"}, `constraints "0": must be positive`},
		{[]string{"prove", "--constraints", "-3"}, `must be positive`},
		{[]string{"prove", "--constraints", "lots"}, `not a number`},
		{[]string{"prove", "--constraints", "2^29"}, `too large`},
		{[]string{"prove", "--constraints", "300000000"}, `too large`},
		{[]string{"prove", "--backend", "tpu"}, `unknown backend "tpu": allowed values are cpu, gpu, auto`},
		{[]string{"prove", "--phases", "msm"}, `unknown phase set "msm": allowed values are all, synthesis`},
		{[]string{"prove", "--srs", "x"}, `allowed values are setup, random`},
		{[]string{"prove", "--lc-storage", "vec"}, `unknown lc-storage "vec": allowed values are heap, inline`},
		{[]string{"prove", "--counters", "on"}, `unknown counters "on": allowed values are auto, off`},
		{[]string{"prove", "--count", "0"}, `at least 1`},
		{[]string{"prove", "--backend", "gpu", "--cuda-lib", "/nonexistent/libperfbot_cuda.so"}, `--backend gpu cannot run: the CUDA library is not found at /nonexistent/libperfbot_cuda.so`},
		{[]string{"prove", "--srs", "random", "--verify"}, `cannot verify`},
		{[]string{"prove", "--no-such-flag"}, `unknown flag: --no-such-flag`},
		{[]string{"prove", "extra"}, `takes no arguments`},
		{[]string{"frobnicate"}, `unknown command "frobnicate"`},
	}
	for _, tc := range cases {
		out, errOut, code := perfbot(t, tc.args...)
		if code != exitUsage {
			t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, exitUsage, errOut)
		}
		if !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "--help' for usage") {
			t.Errorf("%v: stderr %q; want it to contain %q and point at --help", tc.args, errOut, tc.want)
		}
		if out != "" {
			t.Errorf("%v: wrote %q to stdout; want nothing", tc.args, out)
		}
	}
}

func TestBadInputWritesNoOutputFile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	out := filepath.Join(dir, "out.txt")
	_, _, code := perfbot(t, "prove", "--constraints", "0", "--out", out)
	if code != exitUsage {
		t.Fatalf("exit %d, want %d", code, exitUsage)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("bad input left files behind: %v", entries)
	}
}

func TestVersionPrintsGoVersion(t *testing.T) {
	t.Parallel()
	out, _, code := perfbot(t, "version")
	if code != 0 || !strings.HasPrefix(out, "perfbot ") || !strings.Contains(out, "go1.") {
		t.Errorf("version: exit %d, output %q", code, out)
	}
}

// numbers matches every number on a benchmark line, so a golden file can
// pin the shape of the output without its timings.
var (
	numbers = regexp.MustCompile(`\b[0-9][0-9.e+-]*\b`)
	cpuLine = regexp.MustCompile(`(?m)^cpu: .*$`)
)

func TestProveOutputParsesWithBenchfmtAndHasEveryPhase(t *testing.T) {
	t.Parallel()
	// --counters off: which perf counters the kernel allows differs from
	// machine to machine, and the golden shape must not.
	out, errOut, code := perfbot(t, "prove", "--constraints", "1", "--srs", "random",
		"--count", "2", "--warmup", "0", "--key-dir", t.TempDir(), "--seed", "7", "--counters", "off")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "cannot verify") {
		t.Errorf("stderr does not warn that random-SRS proofs cannot verify:\n%s", errOut)
	}

	r := benchfmt.NewReader(strings.NewReader(out), "prove.txt")
	phases := map[string]int{}
	for r.Scan() {
		switch rec := r.Result().(type) {
		case *benchfmt.SyntaxError:
			t.Fatalf("benchfmt: %v", rec)
		case *benchfmt.Result:
			if got := rec.GetConfig("backend"); got != "cpu" {
				t.Errorf("backend config = %q, want cpu", got)
			}
			base, parts := rec.Name.Parts()
			if string(base) != "Prove" || len(parts) != 4 {
				t.Fatalf("name %q: want Prove with 4 key=value parts", rec.Name)
			}
			if string(parts[0]) != "/circuit=sha256" || string(parts[1]) != "/constraints=1" || string(parts[2]) != "/backend=cpu" {
				t.Errorf("name %q", rec.Name)
			}
			phase := strings.TrimPrefix(string(parts[3]), "/phase=")
			phases[phase]++
			if v, ok := rec.Value("sec/op"); !ok || v <= 0 {
				t.Errorf("%s: sec/op = %v, %v; want a positive time", phase, v, ok)
			}
			if phase == "synthesis" {
				n, ok := rec.Value("constraints/op")
				if !ok || n != 18077 {
					t.Errorf("synthesis constraints/op = %v (%v); want 18077, one chain block (see prover/circuit)", n, ok)
				}
			}
			if strings.HasPrefix(phase, "msm_") {
				if _, ok := rec.Value("points/op"); !ok {
					t.Errorf("%s has no points/op", phase)
				}
			}
		}
	}
	for _, p := range []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "assemble", "total"} {
		if phases[p] != 2 {
			t.Errorf("phase %s: %d lines, want 2 (one per proof)", p, phases[p])
		}
	}
	shape := cpuLine.ReplaceAllString(out, "cpu: CPU")
	golden(t, "prove-shape", numbers.ReplaceAllString(shape, "N"))
}

func TestProveSynthesisOnlyPrintsSynthesisAndTotal(t *testing.T) {
	t.Parallel()
	out, errOut, code := perfbot(t, "prove", "--constraints", "2^15", "--phases", "synthesis", "--count", "3", "--warmup", "1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var bench []string
	for _, l := range lines {
		if strings.HasPrefix(l, "Benchmark") {
			bench = append(bench, l)
		}
	}
	if len(bench) != 6 {
		t.Fatalf("got %d benchmark lines, want 6 (synthesis and total for 3 proofs):\n%s", len(bench), out)
	}
	for i, l := range bench {
		want := "/phase=synthesis "
		if i%2 == 1 {
			want = "/phase=total "
		}
		if !strings.Contains(l, want) || !strings.Contains(l, "/constraints=32768/") {
			t.Errorf("line %d = %q; want %q at size 32768", i, l, want)
		}
	}
}

// TestProveLCStorageIsInTheHeader: each storage synthesizes the same
// circuit and says which it was in a header line, which splits benchstat's
// tables by storage.
func TestProveLCStorageIsInTheHeader(t *testing.T) {
	t.Parallel()
	for _, storage := range []string{"", "heap", "inline"} {
		args := []string{"prove", "--phases", "synthesis", "--constraints", "1", "--warmup", "0", "--quiet"}
		if storage != "" {
			args = append(args, "--lc-storage", storage)
		}
		out, errOut, code := perfbot(t, args...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, errOut)
		}
		want := cmp.Or(storage, "heap")
		r := benchfmt.NewReader(strings.NewReader(out), "prove.txt")
		results := 0
		for r.Scan() {
			rec, ok := r.Result().(*benchfmt.Result)
			if !ok {
				continue
			}
			results++
			if got := rec.GetConfig("lc-storage"); got != want {
				t.Errorf("%v: lc-storage config %q, want %q", args, got, want)
			}
			if n, ok := rec.Value("constraints/op"); strings.HasSuffix(string(rec.Name), "phase=synthesis") && (!ok || n != 18077) {
				t.Errorf("%v: synthesis constraints/op = %v; want 18077, the same circuit", args, n)
			}
		}
		if results != 2 {
			t.Errorf("%v: %d results, want synthesis and total:\n%s", args, results, out)
		}
	}
}

// TestProveCountsPerfCountersUnlessOff: by default every line carries the
// software perf counters (where the kernel allows them) and stderr says
// which counters count; --counters off prints none of them.
func TestProveCountsPerfCountersUnlessOff(t *testing.T) {
	t.Parallel()
	args := []string{"prove", "--phases", "synthesis", "--constraints", "1", "--warmup", "0", "--count", "2"}
	out, errOut, code := perfbot(t, args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "perf counters") {
		t.Errorf("stderr does not say which perf counters count:\n%s", errOut)
	}
	refused := regexp.MustCompile(`unavailable.* counters=[^ ]*\btask-clock\b`).MatchString(errOut)
	off, errOff, code := perfbot(t, append(args, "--counters", "off")...)
	if code != 0 {
		t.Fatalf("--counters off: exit %d: %s", code, errOff)
	}
	if strings.Contains(errOff, "perf counters") {
		t.Errorf("--counters off: stderr mentions perf counters:\n%s", errOff)
	}
	for name, text := range map[string]string{"auto": out, "off": off} {
		lines := 0
		for _, l := range strings.Split(text, "\n") {
			if !strings.HasPrefix(l, "Benchmark") {
				continue
			}
			lines++
			has := strings.Contains(l, " task-clock-sec/op") && strings.Contains(l, " context-switches/op")
			if name == "off" && (has || strings.Contains(l, "cycles/op") || strings.Contains(l, "instructions/op")) {
				t.Errorf("--counters off printed counter units: %s", l)
			}
			if name == "auto" && !has && !refused {
				t.Errorf("--counters auto: no task-clock-sec/op and context-switches/op, and no refusal on stderr: %s\n%s", l, errOut)
			}
		}
		if lines != 4 {
			t.Errorf("%s: %d benchmark lines, want 4:\n%s", name, lines, text)
		}
	}
}

func TestProveVerifiesAndCachesKeys(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	args := []string{"prove", "--constraints", "1", "--count", "1", "--warmup", "0", "--verify", "--key-dir", keys}
	_, errOut, code := perfbot(t, args...)
	if code != 0 {
		t.Fatalf("first run: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "origin=setup") {
		t.Errorf("first run should run a setup:\n%s", errOut)
	}
	_, errOut, code = perfbot(t, args...)
	if code != 0 || !strings.Contains(errOut, "origin=cache") {
		t.Fatalf("second run: exit %d, want keys from the cache:\n%s", code, errOut)
	}

	// Corrupt every cached file: the next run must notice, set up again and
	// still produce a proof that verifies.
	files, _ := filepath.Glob(filepath.Join(keys, "*"))
	if len(files) == 0 {
		t.Fatal("no key file cached")
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		b[len(b)/2] ^= 0x40
		if err := os.WriteFile(f, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_, errOut, code = perfbot(t, args...)
	if code != 0 || !strings.Contains(errOut, "origin=setup") {
		t.Fatalf("after corruption: exit %d, want a fresh setup and a verified proof:\n%s", code, errOut)
	}
}

func TestOutFileIsWrittenWhole(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "synth.txt")
	out, errOut, code := perfbot(t, "prove", "--phases", "synthesis", "--constraints", "1", "--warmup", "0", "--out", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if out != "" {
		t.Errorf("stdout = %q; want the lines in the file only", out)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), "/phase=synthesis ") || !strings.HasPrefix(string(b), "goos: ") {
		t.Errorf("file content:\n%s", b)
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("temporary files left behind: %v", entries)
	}
}

// TestOutToAPipeWritesIntoIt: --out naming a FIFO (or /dev/null) writes
// into it and leaves it what it was; renaming a temporary file over it
// would have replaced it with a regular file (as once happened to
// /dev/null).
func TestOutToAPipeWritesIntoIt(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "lines.fifo")
	if err := syscall.Mkfifo(path, 0o600); err != nil {
		t.Skipf("no FIFO here: %v", err)
	}
	read := make(chan []byte, 1)
	go func() {
		b, _ := os.ReadFile(path) // blocks until prove opens it for writing
		read <- b
	}()
	_, errOut, code := perfbot(t, "prove", "--phases", "synthesis", "--constraints", "1", "--warmup", "0", "--out", path)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Fatalf("after prove --out, %s is %v (%v); want the FIFO still", path, fi.Mode(), err)
	}
	select {
	case b := <-read:
		if !strings.Contains(string(b), "/phase=synthesis ") {
			t.Errorf("read from the FIFO:\n%s", b)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("nothing was written into the FIFO")
	}
	fi, err = os.Lstat(path)
	if err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("after prove --out, %s is %v (%v); want the FIFO still", path, fi.Mode(), err)
	}
}

// TestBenchstatMakesAPerPhaseTable runs the real benchstat command on two
// prove outputs, as a maintainer would.
func TestBenchstatMakesAPerPhaseTable(t *testing.T) {
	if testing.Short() {
		t.Skip("builds benchstat: skipped in -short mode")
	}
	t.Parallel()
	dir := t.TempDir()
	bin := filepath.Join(dir, "benchstat")
	build := exec.Command("go", "build", "-o", bin, "golang.org/x/perf/cmd/benchstat")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build benchstat: %v\n%s", err, out)
	}
	var files []string
	for _, name := range []string{"old.txt", "new.txt"} {
		path := filepath.Join(dir, name)
		_, errOut, code := perfbot(t, "prove", "--constraints", "1", "--srs", "random", "--count", "4",
			"--warmup", "0", "--key-dir", dir, "--out", path, "--quiet")
		if code != 0 {
			t.Fatalf("prove: exit %d: %s", code, errOut)
		}
		files = append(files, path)
	}
	cmd := exec.Command(bin, "-row", "/phase", files[0], files[1])
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("benchstat: %v\n%s", err, out)
	}
	table := string(out)
	for _, p := range []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "assemble", "total"} {
		if !regexp.MustCompile(`(?m)^` + p + `\s+\S`).MatchString(table) {
			t.Errorf("benchstat table has no row for phase %s:\n%s", p, table)
		}
	}
	if !strings.Contains(table, "sec/op") || !strings.Contains(table, "old.txt") {
		t.Errorf("benchstat table lacks sec/op or the file columns:\n%s", table)
	}
}

func TestCPUProfileLabelsSamplesWithTheirPhase(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "cpu.pprof")
	_, errOut, code := perfbot(t, "prove", "--constraints", "1", "--srs", "random", "--count", "3",
		"--key-dir", t.TempDir(), "--cpuprofile", path, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("parse profile: %v", err)
	}
	known := map[string]bool{}
	for _, ph := range prover.Phases {
		known[ph] = true
	}
	seen := map[string]int{}
	for _, s := range p.Sample {
		for _, v := range s.Label["phase"] {
			if !known[v] {
				t.Errorf("sample labelled phase=%q, not a phase name", v)
			}
			seen[v]++
		}
	}
	// msm_h and ntt take most of a proof (hundreds of milliseconds for four
	// proofs at 100 Hz); shorter phases may draw no sample.
	for _, ph := range []string{"msm_h", "ntt"} {
		if seen[ph] == 0 {
			t.Errorf("no sample labelled phase=%s; labels seen: %v", ph, seen)
		}
	}
}

func TestMemProfileRecordsTheRunsAllocationsBySite(t *testing.T) {
	// Not parallel: --memprofile sets this process's
	// runtime.MemProfileRate, which the test puts back.
	defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
	dir := t.TempDir()
	path := filepath.Join(dir, "mem.pprof")
	_, errOut, code := perfbot(t, "prove", "--constraints", "1", "--srs", "random", "--count", "2",
		"--key-dir", t.TempDir(), "--memprofile", path, "--quiet")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if runtime.MemProfileRate != memProfileRate {
		t.Errorf("MemProfileRate %d, want %d", runtime.MemProfileRate, memProfileRate)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	p, err := profile.Parse(f)
	if err != nil {
		t.Fatalf("parse profile: %v", err)
	}
	var types []string
	for _, st := range p.SampleType {
		types = append(types, st.Type)
	}
	if strings.Join(types, ",") != "alloc_objects,alloc_space,inuse_objects,inuse_space" {
		t.Errorf("sample types %v, want the allocs profile's", types)
	}
	// Synthesis allocates the constraint system's rows in r1cs: a site
	// of the prover's own must be there, and no phase label.
	found := false
	for _, s := range p.Sample {
		if len(s.Label) > 0 {
			t.Errorf("a heap sample with labels %v: Go's heap profiles have none", s.Label)
			break
		}
		for _, loc := range s.Location {
			for _, l := range loc.Line {
				if strings.HasPrefix(l.Function.Name, "github.com/perfbot/perfbot/prover/r1cs.") {
					found = true
				}
			}
		}
	}
	if !found {
		t.Errorf("no allocation in prover/r1cs among %d samples", len(p.Sample))
	}

	// A path that cannot be written fails before any proof.
	_, errOut, code = perfbot(t, "prove", "--constraints", "1", "--srs", "random", "--memprofile", filepath.Join(dir, "no", "such", "dir", "m"), "--quiet")
	if code == 0 || !strings.Contains(errOut, "create memory profile") {
		t.Errorf("unwritable path: exit %d, %q", code, errOut)
	}
}

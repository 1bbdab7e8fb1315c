package runner

import (
	"context"
	"errors"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/perfbot/perfbot/analysis/stats"
	"github.com/perfbot/perfbot/runner/workspace"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
)

func TestParseConfigExample(t *testing.T) {
	t.Parallel()
	data, err := os.ReadFile("testdata/perfbot.example.yml")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ParseConfig(data)
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		Build:        Steps([]string{"go", "build", "-o", "${PERFBOT_OUT}/perfbot", "./cmd/perfbot"}),
		BuildTimeout: 30 * time.Minute,
		Benchmarks: []Benchmark{{
			Name:       "prove",
			Command:    []string{"${PERFBOT_OUT}/perfbot", "prove"},
			Args:       []string{"--constraints", "2^16", "--count", "1", "--warmup", "1", "--srs", "random", "--quiet"},
			Count:      10,
			Warmup:     1,
			Timeout:    10 * time.Minute,
			CPUsAuto:   true,
			CPUProfile: "--cpuprofile",
		}, {
			Name:       "synthesis",
			Command:    []string{"${PERFBOT_OUT}/perfbot", "prove"},
			Args:       []string{"--phases", "synthesis", "--constraints", "2^18", "--count", "1", "--quiet"},
			Env:        map[string]string{"GOMAXPROCS": "4", "PERFBOT_KEY_DIR": "${PERFBOT_OUT}/keys"},
			Count:      20,
			Warmup:     2,
			Timeout:    5 * time.Minute,
			CPUs:       []int{2, 3, 4, 5},
			MemProfile: "--memprofile",
			Callgrind:  true,
		}},
		Count:        10,
		Warmup:       1,
		MaxCount:     60,
		Timeout:      10 * time.Minute,
		Thresholds:   Thresholds{Alpha: 0.01, MinChangePct: 1.0, MinHistory: 10, Spending: "obrien-fleming", Headline: "total", FailOn: "headline"},
		PrimaryUnits: []string{"sec/op"},
		Order:        "random",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseConfig(example) =\n%+v\nwant\n%+v", got, want)
	}

	// The default is the example without its second benchmark.
	want.Benchmarks = want.Benchmarks[:1]
	if def := DefaultConfig(); !reflect.DeepEqual(def, want) {
		t.Errorf("DefaultConfig() =\n%+v\nwant\n%+v", def, want)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate(): %v", err)
	}

	vars := Vars{Src: "/w/src", Out: "/w/out"}
	syn := got.Benchmarks[1]
	if argv := syn.Argv(vars); !reflect.DeepEqual(argv, []string{"/w/out/perfbot", "prove", "--phases", "synthesis", "--constraints", "2^18", "--count", "1", "--quiet"}) {
		t.Errorf("Argv = %q", argv)
	}
	if env := syn.Environ(vars); !reflect.DeepEqual(env, []string{"GOMAXPROCS=4", "PERFBOT_KEY_DIR=/w/out/keys", "PERFBOT_SRC=/w/src", "PERFBOT_OUT=/w/out"}) {
		t.Errorf("Environ = %q", env)
	}
	if syn.Command[0] != "${PERFBOT_OUT}/perfbot" {
		t.Errorf("Argv changed the config: %q", syn.Command)
	}
}

func TestParseConfigFillsDefaults(t *testing.T) {
	t.Parallel()
	got, err := ParseConfig([]byte("benchmarks:\n  - name: b\n    command: [./bench]\n"))
	if err != nil {
		t.Fatal(err)
	}
	want := &Config{
		BuildTimeout: 30 * time.Minute,
		Benchmarks:   []Benchmark{{Name: "b", Command: []string{"./bench"}, Count: 10, Warmup: 1, Timeout: 10 * time.Minute}},
		Count:        10, Warmup: 1, MaxCount: 60, Timeout: 10 * time.Minute,
		Thresholds:   Thresholds{Alpha: 0.01, MinChangePct: 1, MinHistory: 10, Spending: "obrien-fleming", Headline: "total", FailOn: "headline"},
		PrimaryUnits: []string{"sec/op"},
		Order:        "random",
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("ParseConfig =\n%+v\nwant\n%+v", got, want)
	}

	// Top-level defaults flow into benchmarks that set nothing, not into
	// those that set their own; zero warm-up is allowed.
	got, err = ParseConfig([]byte(`
count: 5
warmup: 0
timeout: 90s
benchmarks:
  - {name: a, command: [a]}
  - {name: b, command: [b], count: 7, warmup: 3, timeout: 1h, cpus: [3, 1, 1]}
`))
	if err != nil {
		t.Fatal(err)
	}
	a, b := got.Benchmarks[0], got.Benchmarks[1]
	if a.Count != 5 || a.Warmup != 0 || a.Timeout != 90*time.Second || a.CPUs != nil {
		t.Errorf("benchmark a = %+v, want count 5, warmup 0, timeout 90s, no cpus", a)
	}
	if b.Count != 7 || b.Warmup != 3 || b.Timeout != time.Hour || !reflect.DeepEqual(b.CPUs, []int{1, 3}) {
		t.Errorf("benchmark b = %+v, want count 7, warmup 3, timeout 1h, cpus [1 3]", b)
	}
}

func TestParseConfigErrors(t *testing.T) {
	t.Parallel()
	const bench = "benchmarks:\n  - name: b\n    command: [x]\n"
	cases := []struct {
		name, yaml string
		want       []string // substrings of the message
	}{
		{"unknown top-level key with line", "count: 3\ncuont: 4\n" + bench,
			[]string{`line 2: unknown key "cuont" at the top level`, `did you mean "count"?`, "known keys: build, build_timeout, benchmarks"}},
		{"unknown benchmark key with line", "benchmarks:\n  - name: b\n    command: [x]\n    repeat: 3\n",
			[]string{`line 4: unknown key "repeat" in a benchmark`, "known keys: name, command, args, env, count, warmup, timeout, cpus, cpuprofile, memprofile, callgrind"}},
		{"memprofile not a flag", "benchmarks:\n  - name: b\n    command: [x]\n    memprofile: mem.out\n",
			[]string{`benchmarks[0] (b).memprofile: "mem.out" is not a flag; write the flag that takes the profile's file, as --memprofile`}},
		{"memprofile also in args", "benchmarks:\n  - name: b\n    command: [x]\n    args: [--memprofile=m.out]\n    memprofile: --memprofile\n",
			[]string{`benchmarks[0] (b).memprofile: "--memprofile=m.out" in command or args already gives --memprofile; remove it: with memprofile set, perfbot appends --memprofile and a file of its own`}},
		{"memprofile is cpuprofile's flag", "benchmarks:\n  - name: b\n    command: [x]\n    cpuprofile: --prof\n    memprofile: --prof\n",
			[]string{`benchmarks[0] (b).memprofile: "--prof" is also cpuprofile's flag; each profile needs its own flag`}},
		{"unknown format", "benchmarks:\n  - name: b\n    command: [x]\n    format: junit\n",
			[]string{`line 4: format: "junit" is not one of go, gbench, criterion, libtest, hyperfine, lines`}},
		{"pattern that does not compile", "benchmarks:\n  - name: b\n    command: [x]\n    format: lines\n    pattern: 'TIMING (?P<value>[0-9.+'\n",
			[]string{`line 5: pattern: error parsing regexp`}},
		{"pattern without value", "benchmarks:\n  - name: b\n    command: [x]\n    format: lines\n    pattern: 'TIMING (?P<phase>\\w+)=([0-9.]+)'\n",
			[]string{`line 5: pattern: "TIMING (?P<phase>\\w+)=([0-9.]+)" has no group named value`}},
		{"lines without a pattern", "benchmarks:\n  - name: b\n    command: [x]\n    format: lines\n",
			[]string{`benchmarks[0] (b).format:`, "pattern"}},
		{"a lines field on Go format", "benchmarks:\n  - name: b\n    command: [x]\n    stream: stderr\n",
			[]string{`benchmarks[0] (b).format: pattern, stream, unit and path configure the other formats`}},
		{"callgrind with another format", "benchmarks:\n  - name: b\n    command: [x]\n    format: libtest\n    callgrind: true\n",
			[]string{`benchmarks[0] (b).callgrind: callgrind counts the spans of a program that prints Go benchmark format; format libtest has none`}},
		{"hyperfine without its file", "benchmarks:\n  - name: b\n    command: [hyperfine, x]\n    format: hyperfine\n",
			[]string{`benchmarks[0] (b).format: format hyperfine needs path`}},
		{"misspelt callgrind", "benchmarks:\n  - name: b\n    command: [x]\n    calgrind: true\n",
			[]string{`line 4: unknown key "calgrind" in a benchmark`, `did you mean "callgrind"?`}},
		{"callgrind not a boolean", "benchmarks:\n  - name: b\n    command: [x]\n    callgrind: yes\n",
			[]string{`line 4: callgrind: the string "yes" is not true or false; write callgrind: true to count instructions under valgrind's callgrind after the timed runs, or leave the key out`}},
		{"resident not a boolean", "benchmarks:\n  - name: b\n    command: [x]\n    resident: yes\n",
			[]string{`line 4: resident: the string "yes" is not true or false; write resident: true to keep one process a side serving every run (docs/resident.md), or leave the key out`}},
		{"resident with another format", "benchmarks:\n  - name: b\n    command: [x]\n    format: libtest\n    resident: true\n",
			[]string{`benchmarks[0] (b).resident: a resident process's runs are read as Go benchmark format; format libtest cannot be: remove resident: true`}},
		{"resident with a heap profile", "benchmarks:\n  - name: b\n    command: [x]\n    memprofile: --memprofile\n    resident: true\n",
			[]string{`benchmarks[0] (b).resident: a heap profile covers a whole process, and a resident one serves every run: remove memprofile or resident: true`}},
		{"callgrind a list", "benchmarks:\n  - name: b\n    command: [x]\n    callgrind: [--tool=callgrind]\n",
			[]string{`line 4: callgrind: a list is not true or false`}},
		{"simulated primary unit", bench + "primary_units: [sec/op, sim-instructions/op]\n",
			[]string{`primary_units[1]: "sim-instructions/op" is a simulated count, one callgrind run a side compared exactly: it explains a change, it cannot decide one; remove it`}},
		{"misspelt cpuprofile", "benchmarks:\n  - name: b\n    command: [x]\n    cpu_profile: --cpuprofile\n",
			[]string{`line 4: unknown key "cpu_profile" in a benchmark`, `did you mean "cpuprofile"?`}},
		{"cpuprofile not a flag", "benchmarks:\n  - name: b\n    command: [x]\n    cpuprofile: cpu.out\n",
			[]string{`benchmarks[0] (b).cpuprofile: "cpu.out" is not a flag; write the flag that takes the profile's file, as --cpuprofile`}},
		{"cpuprofile with a value", "benchmarks:\n  - name: b\n    command: [x]\n    cpuprofile: --cpuprofile=cpu.out\n",
			[]string{`benchmarks[0] (b).cpuprofile: "--cpuprofile=cpu.out" is not a flag`}},
		{"cpuprofile also in args", "benchmarks:\n  - name: b\n    command: [x, --cpuprofile=a.out]\n    args: [--cpuprofile, b.out]\n    cpuprofile: --cpuprofile\n",
			[]string{`benchmarks[0] (b).cpuprofile: "--cpuprofile=a.out" in command or args already gives --cpuprofile; remove it`,
				`"--cpuprofile" in command or args already gives --cpuprofile`}},
		{"unknown threshold key", bench + "thresholds:\n  alfa: 0.1\n",
			[]string{`line 5: unknown key "alfa" in thresholds`, `did you mean "alpha"?`}},
		{"bad duration", "timeout: 5 minutes\n" + bench,
			[]string{`timeout: "5 minutes" is not a duration; write a Go duration such as "90s"`}},
		{"bad benchmark duration", "benchmarks:\n  - name: b\n    command: [x]\n    timeout: 5\n",
			[]string{`benchmarks[0] (b).timeout: "5" is not a duration`}},
		{"zero timeout", "build_timeout: 0s\n" + bench,
			[]string{`build_timeout: 0s is not positive`}},
		{"max_count below count", "count: 20\nmax_count: 10\n" + bench,
			[]string{"max_count: 10 is less than count 20; raise max_count or lower count"}},
		{"benchmark count above max_count", "benchmarks:\n  - name: b\n    command: [x]\n    count: 61\n",
			[]string{"benchmarks[0] (b).count: 61 is more than max_count 60"}},
		{"zero count", "count: 0\n" + bench,
			[]string{"count: 0 is less than 1; set it to 1 or more"}},
		{"negative warmup", "benchmarks:\n  - name: b\n    command: [x]\n    warmup: -1\n",
			[]string{"benchmarks[0] (b).warmup: -1 is less than 0"}},
		{"duplicate names", "benchmarks:\n  - {name: b, command: [x]}\n  - {name: b, command: [y]}\n",
			[]string{`benchmarks[1] (b).name: "b" is also the name of benchmarks[0]; names must be unique`}},
		{"bad name", "benchmarks:\n  - {name: Prove Big, command: [x]}\n",
			[]string{`benchmarks[0] (Prove Big).name: "Prove Big" has characters other than a-z, 0-9, _ and -`}},
		{"missing name and command", "benchmarks:\n  - {count: 2}\n",
			[]string{"benchmarks[0].name: missing", "benchmarks[0].command: missing"}},
		{"no benchmarks", "count: 3\n", []string{"benchmarks: none; add at least one"}},
		{"empty file", "", []string{"benchmarks: none"}},
		{"alpha out of range", bench + "thresholds: {alpha: 1}\n",
			[]string{"thresholds.alpha: 1 is not above 0 and below 0.5"}},
		{"alpha of a half", bench + "thresholds: {alpha: 0.5}\n",
			[]string{"thresholds.alpha: 0.5 is not above 0 and below 0.5"}},
		{"unknown spending", bench + "thresholds: {spending: bonferroni}\n",
			[]string{`thresholds.spending: "bonferroni" is not one of obrien-fleming, pocock`}},
		{"unknown fail_on", bench + "thresholds:\n  fail_on: anything\n",
			[]string{`line 5: thresholds.fail_on: "anything" is not one of headline, any-phase`}},
		{"empty headline", bench + "thresholds: {headline: \"\"}\n",
			[]string{"thresholds.headline: empty; name the phase"}},
		{"unknown order", bench + "order: sideways\n",
			[]string{`order: "sideways" is not one of random, abba, alternate`}},
		{"order as a list", bench + "order: [random]\n",
			[]string{"line 4: a list where one name belongs; write order: random"}},
		{"negative min change", bench + "thresholds: {min_change_pct: -1}\n",
			[]string{"thresholds.min_change_pct: -1 is negative"}},
		{"min history", bench + "thresholds: {min_history: 1}\n",
			[]string{"thresholds.min_history: 1 is less than 2"}},
		{"untidy unit", bench + "primary_units: [ns/op]\n",
			[]string{`primary_units[0]: "ns/op" is stored as "sec/op"; write "sec/op"`}},
		{"no units", bench + "primary_units: []\n", []string{"primary_units: empty"}},
		{"command as a string", "build:\n  - go build ./...\n" + bench,
			[]string{"line 2: a command is a list of arguments, not the string \"go build ./...\"", "[sh, -c"}},
		{"unbraced variable", "build:\n  - [go, build, -o, $PERFBOT_OUT/x]\n" + bench,
			[]string{`build[0]: "$PERFBOT_OUT/x": no shell expands $PERFBOT_OUT; write ${PERFBOT_OUT}`}},
		{"unknown variable", "benchmarks:\n  - name: b\n    command: [x, \"${PERFBOT_BIN}\"]\n",
			[]string{`benchmarks[0] (b).command: "${PERFBOT_BIN}": perfbot knows ${PERFBOT_SRC} and ${PERFBOT_OUT}, not ${PERFBOT_BIN}`}},
		{"reserved env", "benchmarks:\n  - name: b\n    command: [x]\n    env: {PERFBOT_OUT: /x, 1X: y}\n",
			[]string{"benchmarks[0] (b).env: PERFBOT_OUT is set by perfbot", `"1X" is not an environment variable name`}},
		{"bad cpus", "benchmarks:\n  - name: b\n    command: [x]\n    cpus: 5-2\n",
			[]string{`line 4: cpus: "5-2" is not a CPU number or range`}},
		{"empty build command", "build:\n  - []\n" + bench, []string{"build[0]: empty command"}},
		{"absolute input", "build:\n  - run: [make, lib]\n    inputs:\n      - Makefile\n      - /usr/include\n    outputs: [lib.so]\n" + bench,
			[]string{`line 5: build step (make lib): inputs: "/usr/include" is absolute; write a path relative to the repository's top, as cuda/`}},
		{"input out of the repository", "build:\n  - {run: [make], inputs: [src/../../x], outputs: [a]}\n" + bench,
			[]string{`line 2: build step (make): inputs: "src/../../x" leaves the repository's top (..)`}},
		{"excluded input out of the repository", "build:\n  - {run: [make], inputs: [src, \"!../x\"], outputs: [a]}\n" + bench,
			[]string{`line 2: build step (make): inputs: "!../x" leaves the repository's top (..)`}},
		{"bad glob", "build:\n  - {run: [make], inputs: [\"src/[a\"], outputs: [a]}\n" + bench,
			[]string{`line 2: build step (make): inputs: "src/[a" is not a valid glob`}},
		{"unclean input", "build:\n  - {run: [make], inputs: [./src], outputs: [a]}\n" + bench,
			[]string{`line 2: build step (make): inputs: "./src" is not a clean path; write "src"`}},
		{"empty input", "build:\n  - {run: [make], inputs: [\"\"], outputs: [a]}\n" + bench,
			[]string{`line 2: build step (make): inputs: "" is empty`}},
		{"output out of ${PERFBOT_OUT}", "build:\n  - run: [make]\n    inputs: [src]\n    outputs:\n      - ../lib.so\n" + bench,
			[]string{`line 5: build step (make): outputs: "../lib.so" leaves ${PERFBOT_OUT} (..)`}},
		{"output glob", "build:\n  - {run: [make], inputs: [src], outputs: [\"*.so\"]}\n" + bench,
			[]string{`line 2: build step (make): outputs: "*.so" is a glob`}},
		{"inputs a string", "build:\n  - {run: [make], inputs: src, outputs: [a]}\n" + bench,
			[]string{`line 2: build step (make): inputs: a list of paths, not the string "src"`}},
		{"unknown step key", "build:\n  - run: [make]\n    input: [src]\n" + bench,
			[]string{`line 3: unknown key "input" in a build step; did you mean "inputs"? known keys: run, env, inputs, outputs`}},
		{"step without run", "build:\n  - inputs: [src]\n    outputs: [a]\n" + bench,
			[]string{`line 2: a build step written as a mapping needs run: [program, args...]`}},
		{"inputs without outputs", "build:\n  - {run: [make], inputs: [src]}\n" + bench,
			[]string{`build[0] (make): inputs without outputs`}},
		{"outputs without inputs", "build:\n  - {run: [make], outputs: [a]}\n" + bench,
			[]string{`build[0] (make): outputs without inputs`}},
		{"only exclusions", "build:\n  - {run: [make], inputs: [\"!src\"], outputs: [a]}\n" + bench,
			[]string{`build[0] (make).inputs: every entry starts with !`}},
		{"reserved step env", "build:\n  - {run: [make], env: {PERFBOT_SRC: x}}\n" + bench,
			[]string{`build[0] (make).env: PERFBOT_SRC is set by perfbot`}},
		{"build_parallel zero", "build_parallel: 0\n" + bench,
			[]string{`build_parallel: 0 is less than 1; write 1 to build one revision at a time`}},
		{"negative build_verify", "build_verify: -1\n" + bench,
			[]string{`build_verify: -1 is negative`}},
		{"wrong type", "count: many\n" + bench, []string{"line 1: cannot unmarshal !!str `many` into int"}},
		{"two documents", bench + "---\n" + bench, []string{"more than one YAML document"}},
		{"syntax", "benchmarks: [\n", []string{"line"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg, err := ParseConfig([]byte(c.yaml))
			if err == nil {
				t.Fatalf("ParseConfig = %+v, want an error", cfg)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			for _, w := range c.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nwant it to contain %q", err, w)
				}
			}
		})
	}
}

func TestCPUsAutoLeavesTheFirstCPU(t *testing.T) {
	t.Parallel()
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		t.Fatal(err)
	}
	var mine []int
	for c := range maxCPU {
		if set.IsSet(c) {
			mine = append(mine, c)
		}
	}
	b := Benchmark{CPUsAuto: true}
	got, err := b.RunCPUs()
	if err != nil {
		t.Fatal(err)
	}
	want := mine
	if len(mine) > 1 {
		want = mine[1:]
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("RunCPUs() = %v with this process on %v; want %v", got, mine, want)
	}
	if got, _ := (&Benchmark{CPUs: []int{3, 5}}).RunCPUs(); !reflect.DeepEqual(got, []int{3, 5}) {
		t.Errorf("RunCPUs() of a list = %v", got)
	}
	if got, _ := (&Benchmark{}).RunCPUs(); got != nil {
		t.Errorf("RunCPUs() unpinned = %v, want nil", got)
	}
}

func TestConfigHash(t *testing.T) {
	t.Parallel()
	parse := func(s string) *Config {
		t.Helper()
		c, err := ParseConfig([]byte(s))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	base := parse(`
build: [[go, build, -o, "${PERFBOT_OUT}/x", .]]
benchmarks:
  - name: b
    command: ["${PERFBOT_OUT}/x"]
    env: {A: "1", B: "2"}
`)
	same := []string{
		// Flow versus block style, quoting, key order, defaults spelled out.
		`
# a comment
benchmarks:
  - command:
      - ${PERFBOT_OUT}/x
    env:
      B: 2
      A: 1
    name: "b"
    count: 10
    timeout: 600s
    args: []
build:
  - - go
    - build
    - -o
    - '${PERFBOT_OUT}/x'
    - .
count: 10
warmup: 1
thresholds: {alpha: 0.010, min_change_pct: 1}
primary_units: [sec/op]
`,
	}
	for _, s := range same {
		if got, want := parse(s).Hash(), base.Hash(); got != want {
			t.Errorf("equivalent YAML hashes differently:\n%s", s)
		}
		if got, want := parse(s).BuildHash(), base.BuildHash(); got != want {
			t.Errorf("equivalent YAML has another BuildHash:\n%s", s)
		}
	}
	// Pinned: a change re-keys every cached build and every history
	// series, so make it on purpose (and say so in the commit).
	def := DefaultConfig()
	// Changed on purpose when the default began to keep prove's CPU
	// profiles (cpuprofile: --cpuprofile): profiled runs are a new series.
	if got, want := def.Hash(), "514ed570b98b9ef1c3aacc9152ba113636651f8c530101a8bca0ee320e013513"; got != want {
		t.Errorf("DefaultConfig().Hash() = %s, want %s", got, want)
	}
	// A config without cpuprofile hashes as it did before the key
	// existed, so its history and builds stay.
	def.Benchmarks[0].CPUProfile = ""
	if got, want := def.Hash(), "5deb306b43850361b0e6fdf866b58a3bd21e28487c5a560e625fb0a7cc6d924e"; got != want {
		t.Errorf("DefaultConfig() without cpuprofile: Hash() = %s, want %s, its hash before cpuprofile", got, want)
	}
	def.Benchmarks[0].CPUProfile = "--cpuprofile"
	if got, want := def.BuildHash(), "234c5c2e108629029065b675d98ec6c4f729cb82bf92f8fb41de7b58f8ed8b0d"; got != want {
		t.Errorf("DefaultConfig().BuildHash() = %s, want %s", got, want)
	}
	// base in flow style, for the variations below.
	const flow = `benchmarks: [{name: b, command: ["${PERFBOT_OUT}/x"], env: {A: "1", B: "2"}}]
build: [[go, build, -o, "${PERFBOT_OUT}/x", .]]`
	// An empty slice made in code hashes like an absent one.
	code := parse(flow)
	code.Benchmarks[0].Args = []string{}
	if code.Hash() != base.Hash() {
		t.Error("Args []string{} hashes unlike nil")
	}

	changed := map[string]func(c *Config){
		"count":      func(c *Config) { c.Benchmarks[0].Count = 11 },
		"env":        func(c *Config) { c.Benchmarks[0].Env = map[string]string{"A": "1", "B": "3"} },
		"arg":        func(c *Config) { c.Benchmarks[0].Args = []string{"-v"} },
		"cpus":       func(c *Config) { c.Benchmarks[0].CPUs = []int{0} },
		"cpuprofile": func(c *Config) { c.Benchmarks[0].CPUProfile = "--cpuprofile" },
		"build":      func(c *Config) { c.Build[0].Run = append(c.Build[0].Run, "-race") },
		"build time": func(c *Config) { c.BuildTimeout = time.Hour },
	}
	// What decides verdicts, not measurements, keeps the series: the
	// change of defaults to α 0.01 and 60 (2026-12-02) kept every hash.
	verdictOnly := map[string]func(c *Config){
		"alpha":     func(c *Config) { c.Thresholds.Alpha = 0.2 },
		"max_count": func(c *Config) { c.MaxCount = 31 },
		"order":     func(c *Config) { c.Order = OrderAlternate },
		"spending":  func(c *Config) { c.Thresholds.Spending = stats.SpendingPocock },
	}
	for name, change := range verdictOnly {
		c := parse(flow)
		change(c)
		if c.Hash() != base.Hash() {
			t.Errorf("changing %s changed Hash: its runs measure the same", name)
		}
	}
	for name, change := range changed {
		c := parse(flow)
		change(c)
		if c.Hash() == base.Hash() {
			t.Errorf("changing %s left Hash unchanged", name)
		}
		if (c.BuildHash() != base.BuildHash()) != (name == "build") {
			t.Errorf("changing %s: BuildHash changed = %v", name, c.BuildHash() != base.BuildHash())
		}
	}
}

func TestLoadConfigFromBaseRevision(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	repo := workspacetest.New(t)
	other := repo.Commit(t, "another project, no config", map[string]string{"README": "x\n", "go.mod": "module example.com/prover\n"})
	without := repo.Commit(t, "perfbot, no config", map[string]string{"go.mod": ownModule + "\n\ngo 1.26\n"})
	with := repo.Commit(t, "config", map[string]string{ConfigFile: "count: 3\nbenchmarks: [{name: b, command: [x]}]\n"})
	broken := repo.Commit(t, "broken config", map[string]string{ConfigFile: "count: 3\nbogus: 1\nbenchmarks: [{name: b, command: [x]}]\n"})
	// The working tree's copy is not what counts.
	if err := os.WriteFile(repo.Dir+"/"+ConfigFile, []byte("nonsense: ["), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := workspace.Open(ctx, repo.Dir, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}

	// Only perfbot itself gets the built-in default; another repository
	// is told what to write.
	if _, _, err := LoadConfig(ctx, ws, other); !errors.Is(err, ErrNoConfig) || !strings.Contains(err.Error(), "has no .perfbot.yml at "+other[:12]) {
		t.Errorf("LoadConfig(another project without a config) error = %v, want ErrNoConfig", err)
	}
	cfg, source, err := LoadConfig(ctx, ws, without)
	if err != nil || !reflect.DeepEqual(cfg, DefaultConfig()) || source != "default (no .perfbot.yml at "+without[:12]+")" {
		t.Errorf("LoadConfig(without) = %+v, %q, %v; want the default", cfg, source, err)
	}
	cfg, source, err = LoadConfig(ctx, ws, with)
	if err != nil || cfg.Count != 3 || source != ".perfbot.yml at "+with[:12] {
		t.Errorf("LoadConfig(with) = %+v, %q, %v; want count 3 from the file", cfg, source, err)
	}
	_, _, err = LoadConfig(ctx, ws, broken)
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), ".perfbot.yml at "+broken[:12]) ||
		!strings.Contains(err.Error(), `line 2: unknown key "bogus"`) {
		t.Errorf("LoadConfig(broken) error = %v", err)
	}
	if _, _, err = LoadConfig(ctx, ws, "no-such-rev"); !errors.Is(err, workspace.ErrUnknownRevision) {
		t.Errorf("LoadConfig(unknown) error = %v, want ErrUnknownRevision", err)
	}
}

func TestParseConfigCallgrindIsABooleanThatLeavesTheHashAlone(t *testing.T) {
	t.Parallel()
	const without = "benchmarks:\n  - name: b\n    command: [x]\n"
	plain, err := ParseConfig([]byte(without))
	if err != nil {
		t.Fatal(err)
	}
	off, err := ParseConfig([]byte(without + "    callgrind: false\n"))
	if err != nil {
		t.Fatal(err)
	}
	on, err := ParseConfig([]byte(without + "    callgrind: true\n"))
	if err != nil {
		t.Fatal(err)
	}
	if plain.Benchmarks[0].Callgrind || off.Benchmarks[0].Callgrind || !on.Benchmarks[0].Callgrind {
		t.Errorf("callgrind: absent %v, false %v, true %v", plain.Benchmarks[0].Callgrind, off.Benchmarks[0].Callgrind, on.Benchmarks[0].Callgrind)
	}
	// The timed runs are the same with callgrind on or off: one config
	// hash, one history.
	if plain.Hash() != off.Hash() || plain.Hash() != on.Hash() {
		t.Errorf("hashes: absent %s, false %s, true %s; want them equal", plain.Hash()[:8], off.Hash()[:8], on.Hash()[:8])
	}
	if on.Benchmarks[0].Callgrind != true {
		t.Errorf("Hash changed the config it hashed")
	}
}

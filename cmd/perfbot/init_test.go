package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/runner"
)

// initProject writes files into a new directory and returns it.
func initProject(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range files {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		write(t, path, body)
	}
	return dir
}

func TestInitWritesAStarterThatParsesForEachKindOfProject(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name  string
		files map[string]string
		want  []string // in the written file
		kind  string   // the format of the first benchmark
	}{
		{"go", map[string]string{
			"go.mod":                "module example.com/pairing\n",
			"pairing/bench_test.go": "package pairing\n\nfunc BenchmarkPair(b *testing.B) {}\n",
			"other/x_test.go":       "package other\n\nfunc TestX(t *testing.T) {}\n",
		}, []string{`[go, test, -c, -o, "${PERFBOT_OUT}/pairing.test", ./pairing]`, "cpuprofile: -test.cpuprofile"}, ""},
		{"rust criterion", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n[dev-dependencies]\ncriterion = \"0.5\"\n[[bench]]\nname = \"checksums\"\nharness = false\n"},
			[]string{`export CARGO_TARGET_DIR="$HOME/.cache/perfbot/cargo-target"`, "path: target/criterion"}, "criterion"},
		{"rust libtest", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n", "benches/checksums.rs": "#![feature(test)]\n"},
			[]string{"exe=$(RUSTC_BOOTSTRAP=1 cargo bench --no-run --bench checksums "}, "libtest"},
		{"cmake", map[string]string{"CMakeLists.txt": "find_package(benchmark REQUIRED)\nadd_executable(msm_bench msm_bench.cc)\n"},
			[]string{`"${PERFBOT_OUT}/build/msm_bench", --benchmark_format=json`}, "gbench"},
		{"nothing known", map[string]string{"README": "a prover\n"}, []string{"pattern: 'TIMING (?P<phase>"}, "lines"},
	}
	for _, c := range cases {
		dir := initProject(t, c.files)
		_, errOut, code := perfbot(t, "init", "--repo", dir)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		b, err := os.ReadFile(filepath.Join(dir, ".perfbot.yml"))
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		cfg, err := runner.ParseConfig(b)
		if err != nil {
			t.Errorf("%s: the written file does not parse: %v\n%s", c.name, err, b)
			continue
		}
		for _, w := range c.want {
			if !strings.Contains(string(b), w) {
				t.Errorf("%s: the file lacks %q:\n%s", c.name, w, b)
			}
		}
		if got := cfg.Benchmarks[0].Format; got != c.kind {
			t.Errorf("%s: format %q, want %q", c.name, got, c.kind)
		}
		if c.name == "go" && (len(cfg.Benchmarks) != 1 || cfg.Benchmarks[0].Name != "pairing") {
			t.Errorf("go: benchmarks %+v, want the one package with benchmarks", cfg.Benchmarks)
		}
	}
}

func TestInitNeverOverwritesAndPrintsOnRequest(t *testing.T) {
	t.Parallel()
	dir := initProject(t, map[string]string{".perfbot.yml": "count: 3\n", "Cargo.toml": "[package]\n"})
	_, errOut, code := perfbot(t, "init", "--repo", dir)
	if code != exitUsage || !strings.Contains(errOut, ".perfbot.yml exists: init does not overwrite it") {
		t.Errorf("exit %d: %s; want exit 2 and why", code, errOut)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, ".perfbot.yml")); string(b) != "count: 3\n" {
		t.Errorf("the existing file was changed: %q", b)
	}
	out, _, code := perfbot(t, "init", "--repo", dir, "--print")
	if code != 0 || !strings.Contains(out, "format: libtest") {
		t.Errorf("--print: exit %d\n%s", code, out)
	}
	if _, _, code := perfbot(t, "init", "--repo", filepath.Join(dir, "nope")); code != exitUsage {
		t.Errorf("a --repo that is not a directory: exit %d, want %d", code, exitUsage)
	}
}

// The Rust starters are docs/guarding.md's setup: one build step that
// builds every bench target in a shared cargo target directory and copies
// each binary into ${PERFBOT_OUT}, builds one at a time, and benchmarks
// that run those binaries directly (criterion without its plots).
func TestInitRustStartersBuildOnceInASharedTargetDirectory(t *testing.T) {
	t.Parallel()
	copyOut := func(cargo, target string) []string {
		return []string{
			"      exe=$(" + cargo + " bench --no-run --bench " + target + ` --message-format=json-render-diagnostics | sed -n 's/.*"executable":"\([^"]*\)".*/\1/p')`,
			`      cp "$exe" "${PERFBOT_OUT}/` + target + `"`,
		}
	}
	script := func(cargo string, targets ...string) string {
		lines := []string{"set -e", `export CARGO_TARGET_DIR="$HOME/.cache/perfbot/cargo-target"`, `find . -path ./target -prune -o -name '*.rs' -exec touch {} +`}
		for _, tg := range targets {
			for _, l := range copyOut(cargo, tg) {
				lines = append(lines, strings.TrimPrefix(l, "      "))
			}
		}
		return strings.Join(lines, "\n") + "\n"
	}
	cases := []struct {
		name     string
		files    map[string]string
		format   string
		script   string
		commands [][]string // each benchmark's, in order
		names    []string
		warmup   int
	}{
		{"criterion, a [[bench]] and a discovered one", map[string]string{
			"Cargo.toml":           "[package]\nname = \"mixer\"\n\n[dev-dependencies]\ncriterion = \"0.3\"\n\n[[bench]]\nname = \"checksums\"\nharness = false\n\n[profile.bench]\nname = \"not-a-bench\"\n",
			"benches/hashing.rs":   "",
			"benches/checksums.rs": "",
			"benches/util/mod.rs":  "",
		}, "criterion", script("cargo", "checksums", "hashing"),
			[][]string{{"${PERFBOT_OUT}/checksums", "--bench", "--noplot"}, {"${PERFBOT_OUT}/hashing", "--bench", "--noplot"}},
			[]string{"checksums", "hashing"}, 1},
		{"libtest, benches/NAME/main.rs", map[string]string{
			"Cargo.toml":                "[package]\nname = \"mixer\"\n",
			"benches/checksums/main.rs": "#![feature(test)]\n",
		}, "libtest", script("RUSTC_BOOTSTRAP=1 cargo", "checksums"),
			[][]string{{"${PERFBOT_OUT}/checksums", "--bench"}}, []string{"checksums"}, 0},
		{"libtest, no bench target", map[string]string{"Cargo.toml": "[package]\nname = \"mixer\"\n"},
			"libtest", script("RUSTC_BOOTSTRAP=1 cargo", "my_bench"),
			[][]string{{"${PERFBOT_OUT}/my_bench", "--bench"}}, []string{"my_bench"}, 0},
	}
	for _, c := range cases {
		dir := initProject(t, c.files)
		out, errOut, code := perfbot(t, "init", "--repo", dir, "--print")
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", c.name, code, errOut)
		}
		cfg, err := runner.ParseConfig([]byte(out))
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.name, err, out)
		}
		if len(cfg.Build) != 1 || !slices.Equal(cfg.Build[0].Run, []string{"sh", "-c", c.script}) {
			t.Errorf("%s: build %q, want one step:\nsh -c %q", c.name, cfg.Build, c.script)
		}
		if cfg.BuildParallel != 1 {
			t.Errorf("%s: build_parallel %d, want 1 (the builds share a target directory)", c.name, cfg.BuildParallel)
		}
		if len(cfg.Benchmarks) != len(c.commands) {
			t.Fatalf("%s: %d benchmarks, want %d:\n%s", c.name, len(cfg.Benchmarks), len(c.commands), out)
		}
		for i, bm := range cfg.Benchmarks {
			if bm.Name != c.names[i] || !slices.Equal(bm.Command, c.commands[i]) || bm.Format != c.format || bm.Warmup != c.warmup {
				t.Errorf("%s: benchmark %d: %s %q format %s warmup %d; want %s %q format %s warmup %d",
					c.name, i, bm.Name, bm.Command, bm.Format, bm.Warmup, c.names[i], c.commands[i], c.format, c.warmup)
			}
			if want := map[string]string{"criterion": "target/criterion", "libtest": ""}[c.format]; bm.Path != want {
				t.Errorf("%s: benchmark %d: path %q, want %q", c.name, i, bm.Path, want)
			}
		}
		if placeholder := strings.Contains(out, "No bench target found"); placeholder != (c.names[0] == "my_bench") {
			t.Errorf("%s: says no bench target was found: %v\n%s", c.name, placeholder, out)
		}
	}
}

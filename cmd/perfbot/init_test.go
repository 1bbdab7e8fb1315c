package main

import (
	"os"
	"path/filepath"
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
		{"rust criterion", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n[dev-dependencies]\ncriterion = \"0.5\"\n"},
			[]string{"[cargo, bench, --no-run]", "path: target/criterion"}, "criterion"},
		{"rust libtest", map[string]string{"Cargo.toml": "[package]\nname = \"x\"\n"}, []string{"[cargo, bench]"}, "libtest"},
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

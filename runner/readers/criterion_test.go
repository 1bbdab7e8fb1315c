package readers

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// The tree testdata/criterion/results holds the benchmark.json and
// sample.json files (new/ and base/) that criterion 0.3.6, Debian's
// librust-criterion-dev, wrote on the second run of cargo bench in
// testdata/criterion/crate: base/ is the first run's.

func TestCriterionReadsNewSamplesOnly(t *testing.T) {
	t.Parallel()
	got := byKey(mustRead(t, mustNew(t, Config{Format: "criterion", Path: "criterion/results"}), Output{Dir: "testdata"}))
	want := []string{"mix/function=steps/param=1000 sec/op", "mix/function=steps/param=4000 sec/op", "mix/param=2000 sec/op", "mix_500 sec/op"}
	if k := keys(got); strings.Join(k, "\n") != strings.Join(want, "\n") {
		t.Fatalf("keys:\n%s\nwant:\n%s", strings.Join(k, "\n"), strings.Join(want, "\n"))
	}
	// Per-iteration times from new/sample.json: times[i]/iters[i] ns.
	iters := []float64{2332, 4664, 6996, 9328, 11660, 13992, 16324, 18656, 20988, 23320}
	times := []float64{5235198, 10563856, 15913929, 22093168, 37582529, 39267965, 35642117, 41726447, 47414954, 51835463}
	var v []float64
	for i := range iters {
		v = append(v, times[i]/iters[i]*1e-9)
	}
	wantValues(t, got, "mix/function=steps/param=1000 sec/op", v...)
	for k, v := range got {
		if len(v) != 10 {
			t.Errorf("%s: %d values, want new/'s 10 samples, not base/'s as well", k, len(v))
		}
	}
}

func TestCriterionIgnoresResultsOfEarlierRuns(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	if err := os.CopyFS(dir, os.DirFS("testdata/criterion/results")); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	old := start.Add(-time.Hour)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && !strings.Contains(p, "mix 500") {
			err = os.Chtimes(p, old, old)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, Config{Format: "criterion", Path: "."})
	got := byKey(mustRead(t, r, Output{Dir: dir, Start: start}))
	if k := keys(got); len(k) != 1 || k[0] != "mix_500 sec/op" {
		t.Fatalf("keys %v, want mix_500's alone: the others are older than the run", k)
	}
	_, err = r.Read(Output{Dir: dir, Start: start.Add(time.Hour)})
	wantErr(t, err, "no benchmark under . was measured in this run", "4 older than the run", "new/benchmark.json")
}

func TestCriterionNames(t *testing.T) {
	t.Parallel()
	str := func(s string) *string { return &s }
	for _, tc := range []struct {
		group           string
		function, value *string
		want            string
	}{
		{"fib 20", nil, nil, "fib_20"},
		{"sort", str("quick"), str("1024"), "sort/function=quick/param=1024"},
		{"sort", nil, str("1024"), "sort/param=1024"},
		{"sort/n=1", str("a/b"), str("x y"), "sort/n=1/function=a_b/param=x_y"},
		{"msm", nil, str("points=1024/curve=bn254"), "msm/points=1024/curve=bn254"},
		{"prove", str("phase"), str("phase=msm"), "prove/function=phase/phase_=msm"},
		{"g/1", nil, nil, "g/arg0=1"},
		{" ", str("f"), nil, ""},
	} {
		if got := criterionName(tc.group, tc.function, tc.value); got != tc.want {
			t.Errorf("criterionName(%q, %v, %v) = %q, want %q", tc.group, tc.function, tc.value, got, tc.want)
		}
	}
}

func TestCriterionRejectsOtherFilesSayingWhatItWants(t *testing.T) {
	t.Parallel()
	_, err := mustNew(t, Config{Format: "criterion"}).Read(Output{Dir: t.TempDir()})
	wantErr(t, err, "read criterion results", "target/criterion")
	_, err = mustNew(t, Config{Format: "criterion", Path: "lines"}).Read(Output{Dir: "testdata"})
	wantErr(t, err, "no benchmark under lines", "new/benchmark.json and sample.json")
	bench := `{"group_id":"g","function_id":null,"value_str":null}`
	for _, tc := range []struct{ bench, sample, want string }{
		{"", `{"iters":[1],"times":[1]}`, "benchmark.json"},
		{`{"function_id":"f"}`, `{"iters":[1],"times":[1]}`, "no group_id"},
		{bench, `{"iters":[1,2],"times":[1]}`, "2 iters and 1 times"},
		{bench, `{"iters":[],"times":[]}`, "0 iters"},
		{bench, `{"iters":[0],"times":[5]}`, "no sample with iters > 0"},
		{bench, `[1,2]`, "sample.json"},
	} {
		_, err := parseCriterion([]byte(tc.bench), []byte(tc.sample))
		wantErr(t, err, tc.want, `want benchmark.json {"group_id"`)
	}
}

// criterionCargoConfig points cargo at Debian's packaged crates, offline.
const criterionCargoConfig = `[source.crates-io]
replace-with = "debian"

[source.debian]
directory = "/usr/share/cargo/registry"

[net]
offline = true
`

// Not parallel: cargo builds on every core, which would disturb the tests that compare timings.
func TestCriterionReadsARealCargoBenchRun(t *testing.T) {
	home, _ := os.UserHomeDir()
	cargo := lookTool(t, "cargo", "cargo", filepath.Join(home, ".cargo", "bin"))
	lookTool(t, "cc", "gcc") // rustc's linker
	if m, _ := filepath.Glob("/usr/share/cargo/registry/criterion-0.3.*"); len(m) == 0 {
		missingTool(t, "no criterion 0.3 crate in /usr/share/cargo/registry: apt-get install librust-criterion-dev")
	}
	crate := t.TempDir()
	if err := os.CopyFS(crate, os.DirFS("testdata/criterion/crate")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(crate, ".cargo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(crate, ".cargo", "config.toml"), []byte(criterionCargoConfig), 0o644); err != nil {
		t.Fatal(err)
	}
	// Build in the user's cache, so that criterion and its dependencies
	// compile once (about 2 minutes on 2 cores), not on every test run.
	cache, err := os.UserCacheDir()
	if err != nil {
		cache = t.TempDir()
	}
	target := filepath.Join(cache, "perfbot", "readers-criterion-target")
	env := []string{"CARGO_TARGET_DIR=" + target, "CRITERION_HOME=" + filepath.Join(crate, "out"), "PATH=" + filepath.Dir(cargo) + ":" + os.Getenv("PATH")}
	start := time.Now()
	stdout, stderr := runTool(t, crate, env, cargo, "bench", "--offline", "--bench", "mix")
	got := byKey(mustRead(t, mustNew(t, Config{Format: "criterion", Path: "out"}), Output{Stdout: stdout, Stderr: stderr, Dir: crate, Start: start}))
	want := []string{"mix/function=steps/param=1000 sec/op", "mix/function=steps/param=4000 sec/op", "mix/param=2000 sec/op", "mix_500 sec/op"}
	if k := keys(got); strings.Join(k, "\n") != strings.Join(want, "\n") {
		t.Fatalf("keys:\n%s\nwant:\n%s", strings.Join(k, "\n"), strings.Join(want, "\n"))
	}
	for k, v := range got {
		if len(v) != 10 {
			t.Errorf("%s: %d values, want sample_size 10", k, len(v))
		}
	}
	// 4000 steps take about four times as long as 1000: the values are
	// per-iteration times that follow the work. The fastest sample of
	// each is compared, and the range is wide: the two ran at different
	// times, and a busy neighbour (make test runs packages side by side)
	// stretched them to ×7.2 and ×2.3 on two cores. The exact values are
	// checked against the recorded files above.
	r := slices.Min(got["mix/function=steps/param=4000 sec/op"]) / slices.Min(got["mix/function=steps/param=1000 sec/op"])
	if r < 1.5 || r > 12 {
		t.Errorf("4000 steps took ×%.2f the time of 1000, want about ×4", r)
	}
}

package readers

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"
)

// The files under testdata/hyperfine are what Debian's hyperfine 1.15.0
// wrote: commands.json from --runs 5 --export-json 'sleep 0.01' 'sleep
// 0.02', scan.json from --runs 3 -L ms 10,20 -L mode a,b 'sleep 0.0{ms} #
// {mode}', failing.json from -N -i --runs 3 true false.

func TestHyperfineReadsEachRunOfEachCommand(t *testing.T) {
	t.Parallel()
	got := byKey(mustRead(t, mustNew(t, Config{Format: "hyperfine", Path: "hyperfine/commands.json"}), Output{Dir: "testdata"}))
	if len(got) != 2 {
		t.Fatalf("keys %v, want the two commands", keys(got))
	}
	wantValues(t, got, "sleep_0.01 sec/op", 0.01025334378, 0.00851269078, 0.009824419780000001, 0.009338830780000001, 0.00849783578)
	wantValues(t, got, "sleep_0.02 sec/op", 0.02189968578, 0.02211065178, 0.018922292780000002, 0.02071509078, 0.01882357678)
}

func TestHyperfineNamesAParameterScanByItsParameters(t *testing.T) {
	t.Parallel()
	got := byKey(mustRead(t, mustNew(t, Config{Format: "hyperfine", Path: "hyperfine/scan.json"}), Output{Dir: "testdata"}))
	if len(got) != 4 {
		t.Fatalf("keys %v, want 4", keys(got))
	}
	wantValues(t, got, "mode=a/ms=10 sec/op", 0.01002227934, 0.01123753834, 0.01021441734)
	wantValues(t, got, "mode=b/ms=20 sec/op", 0.01957643734, 0.02337331334, 0.01957686434)
}

func TestHyperfineNamesClashingParametersWithTheCommand(t *testing.T) {
	t.Parallel()
	data := []byte(`{"results": [
	  {"command": "./prove --fast 4", "times": [1.5], "parameters": {"n": "4"}},
	  {"command": "./prove --slow 4", "times": [2.5], "parameters": {"n": "4"}}]}`)
	s, err := parseHyperfine(data)
	if err != nil {
		t.Fatal(err)
	}
	checkSamples(t, s)
	got := byKey(s)
	wantValues(t, got, "._prove_--fast_4/n=4 sec/op", 1.5)
	wantValues(t, got, "._prove_--slow_4/n=4 sec/op", 2.5)
}

func TestHyperfineLeavesOutRunsThatFailed(t *testing.T) {
	t.Parallel()
	got := byKey(mustRead(t, mustNew(t, Config{Format: "hyperfine", Path: "hyperfine/failing.json"}), Output{Dir: "testdata"}))
	if len(got) != 1 {
		t.Fatalf("keys %v, want true's alone: false exited 1", keys(got))
	}
	wantValues(t, got, "true sec/op", 0.000726465, 0.000806306, 0.0006231170000000001)
}

func TestHyperfineRejectsOtherFilesSayingWhatItWants(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := mustNew(t, Config{Format: "hyperfine", Path: "h.json"})
	_, err := r.Read(Output{Dir: dir})
	wantErr(t, err, "open hyperfine --export-json file h.json")
	for name, data := range map[string]string{
		"markdown":  "| Command | Mean [ms] |\n",
		"no times":  `{"results": [{"command": "sleep 1", "mean": 1.0}]}`,
		"no runs":   `{"results": []}`,
		"all fail":  `{"results": [{"command": "false", "times": [0.1], "exit_codes": [1]}]}`,
		"no name":   `{"results": [{"command": "", "times": [0.1]}]}`,
		"not times": `{"results": [{"command": "x", "times": ["fast"]}]}`,
	} {
		if err := os.WriteFile(filepath.Join(dir, "h.json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := r.Read(Output{Dir: dir})
		wantErr(t, err, "read hyperfine results", "--export-json")
		t.Logf("%s: %v", name, err)
	}
}

func TestHyperfineReadsARealHyperfineRun(t *testing.T) {
	t.Parallel()
	hf := lookTool(t, "hyperfine", "hyperfine")
	dir := t.TempDir()
	start := time.Now()
	// --shell=none runs the sleeps without a shell, so nothing is
	// subtracted for a shell's start-up: with a shell, hyperfine takes a
	// calibration of it away, which a busy machine can make longer than
	// the sleep (a 10 ms sleep was once read as 0 s).
	runTool(t, dir, nil, hf, "--shell=none", "--runs", "5", "--export-json", "plain.json", "sleep 0.01")
	runTool(t, dir, nil, hf, "--shell=none", "--runs", "3", "-L", "ms", "10,30", "--export-json", "scan.json", "sleep 0.0{ms}")
	o := Output{Dir: dir, Start: start}
	plain := byKey(mustRead(t, mustNew(t, Config{Format: "hyperfine", Path: "plain.json"}), o))
	scan := byKey(mustRead(t, mustNew(t, Config{Format: "hyperfine", Path: "scan.json"}), o))
	if len(plain) != 1 || len(plain["sleep_0.01 sec/op"]) != 5 {
		t.Fatalf("plain: %v, want 5 values of sleep_0.01 sec/op", plain)
	}
	if len(scan) != 2 || len(scan["ms=10 sec/op"]) != 3 || len(scan["ms=30 sec/op"]) != 3 {
		t.Fatalf("scan: %v, want 3 values each of ms=10 and ms=30", scan)
	}
	// A sleep takes at least its time, however busy the machine; read in
	// seconds (not milliseconds or nanoseconds) it is well under a second.
	for k, lo := range map[string]float64{"sleep_0.01 sec/op": 0.01, "ms=10 sec/op": 0.01, "ms=30 sec/op": 0.03} {
		v := plain[k]
		if v == nil {
			v = scan[k]
		}
		if m := slices.Min(v); m < lo || median(v) > 1 {
			t.Errorf("%s: %v s, not the time of a %g s sleep", k, v, lo)
		}
	}
}

// A command under a revision's build directory is named the same for every
// revision: the absolute path is cut to the program's name.
func TestHyperfineNamesACommandTheSameWhateverItsBuildDirectory(t *testing.T) {
	t.Parallel()
	name := func(dir string) string {
		data := `{"results": [{"command": "` + dir + `/prove --n 5 ./rel/x", "times": [0.1, 0.2]}]}`
		got, err := parseHyperfine([]byte(data))
		if err != nil || len(got) != 2 {
			t.Fatalf("%v: %v", got, err)
		}
		return got[0].Benchmark
	}
	a, b := name("/data/builds/1a2b3c"), name("/data/builds/4d5e6f")
	if a != b || a != "prove_--n_5_._rel_x" {
		t.Errorf("names %q and %q, want both prove_--n_5_._rel_x", a, b)
	}
}

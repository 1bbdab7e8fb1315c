package readers

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/perfbot/perfbot/analysis"
)

// The files testdata/lines/stdout.txt and stderr.txt are what
// testdata/lines/prover.sh printed (when its phases slept 50 and 30 ms).

// cuzkPattern is the pattern for a real prover's timing lines.
const cuzkPattern = `CUZK_TIMING (?P<phase>\w+)_(?P<unit>ms)=(?P<value>[0-9.]+)`

func TestLinesReadsPhaseTimingsOfAProver(t *testing.T) {
	t.Parallel()
	stdout, err := os.ReadFile("testdata/lines/stdout.txt")
	if err != nil {
		t.Fatal(err)
	}
	r := mustNew(t, Config{Format: "lines", Pattern: cuzkPattern, Name: "cuzk"})
	s := mustRead(t, r, Output{Stdout: stdout})
	if s[0].Key != (analysis.Key{Benchmark: "cuzk", Phase: "synthesis", Unit: "sec/op"}) {
		t.Fatalf("first key %+v", s[0].Key)
	}
	got := byKey(s)
	if len(got) != 2 {
		t.Fatalf("keys %v, want synthesis and msm", keys(got))
	}
	wantValues(t, got, "cuzk/phase=synthesis sec/op", 0.051251, 0.052969, 0.051401)
	wantValues(t, got, "cuzk/phase=msm sec/op", 0.033554, 0.032527, 0.031374)
}

func TestLinesUnitsBenchmarksAndStreams(t *testing.T) {
	t.Parallel()
	o := Output{
		Stdout: []byte("CUZK_TIMING synthesis_ms=54712 msm_ms=1234\nsort n=1024 took 1234 ns\nrss 52 MB\nsort/4096 took 2 s\n"),
		Stderr: []byte("[info] proof 0: verify 1.5e-3 s\r\n"),
	}
	for _, tc := range []struct {
		c    Config
		want map[string][]float64
	}{
		// Several matches on one line; a unit group holding NAME_ms.
		{Config{Pattern: `(?P<unit>\w+_ms)=(?P<value>[0-9]+)`},
			map[string][]float64{"lines synthesis-sec/op": {54.712}, "lines msm-sec/op": {1.234}}},
		// 1234 ns is 1.234e-6 sec/op; a benchmark group, split into parts.
		{Config{Pattern: `^(?P<benchmark>sort\S*)(?: n=(?P<n>\d+))? took (?P<value>\d+) (?P<unit>\w+)`}, nil},
		{Config{Pattern: `^(?P<benchmark>sort\S*)(?: n=\d+)? took (?P<value>\d+) (?P<unit>\w+)`},
			map[string][]float64{"sort sec/op": {1.234e-6}, "sort/arg0=4096 sec/op": {2}}},
		// The config's unit, without a unit group.
		{Config{Pattern: `^rss (?P<value>\d+) MB`, Unit: "MB", Name: "prover"},
			map[string][]float64{"prover MB/op": {52}}},
		{Config{Pattern: `^rss (?P<value>\d+) MB`, Unit: "ms"},
			map[string][]float64{"lines sec/op": {0.052}}},
		// Standard error.
		{Config{Pattern: `proof \d+: (?P<phase>\w+) (?P<value>\S+) (?P<unit>\w+)$`, Stream: "stderr"},
			map[string][]float64{"lines/phase=verify sec/op": {1.5e-3}}},
	} {
		tc.c.Format = "lines"
		r, err := New(tc.c)
		if tc.want == nil {
			wantErr(t, err, `group "n"`)
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		got := byKey(mustRead(t, r, o))
		if len(got) != len(tc.want) {
			t.Fatalf("%s: keys %v, want %v", tc.c.Pattern, keys(got), keys(tc.want))
		}
		for k, v := range tc.want {
			wantValues(t, got, k, v...)
		}
	}
}

func TestLinesRejectsOutputThatDoesNotMatchSayingWhatItWants(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{Format: "lines", Pattern: cuzkPattern})
	_, err := r.Read(Output{Stdout: []byte("proof done\n"), Stderr: []byte("CUZK_TIMING synthesis_ms=1\n")})
	wantErr(t, err, "read lines", "no line of stdout", cuzkPattern)
	r = mustNew(t, Config{Format: "lines", Pattern: `t=(?P<value>\S+)`, Unit: "s"})
	_, err = r.Read(Output{Stdout: []byte("start\nt=fast\n")})
	wantErr(t, err, "stdout:2", `value "fast" is not a number`)
	r = mustNew(t, Config{Format: "lines", Pattern: `t=(?P<value>\d+)(?P<unit>[a-z]*)`, Unit: ""})
	_, err = r.Read(Output{Stdout: []byte("t=4\n")})
	wantErr(t, err, "stdout:1", "no unit")
}

// runProver runs testdata/lines/prover.sh with env and returns its output.
func runProver(t *testing.T, env ...string) Output {
	t.Helper()
	bash := lookTool(t, "bash", "bash")
	lookTool(t, "awk", "mawk")
	lookTool(t, "sleep", "coreutils")
	script, err := filepath.Abs("testdata/lines/prover.sh")
	if err != nil {
		t.Fatal(err)
	}
	stdout, stderr := runTool(t, t.TempDir(), append([]string{"LC_ALL=C"}, env...), bash, script)
	return Output{Stdout: stdout, Stderr: stderr}
}

// The prover's phases are timed sleeps, which a busy machine stretches
// by the time it takes to start a process: each attempt adds one run of
// each side, and the medians of all runs so far are judged, until they
// settle or five attempts have run (a quiet machine settles at the first).
func TestLinesPlantedSlowdownShowsInThatPhaseOnly(t *testing.T) {
	t.Parallel()
	r := mustNew(t, Config{Format: "lines", Pattern: cuzkPattern, Name: "cuzk"})
	var base, slow []analysis.Sample
	var changed map[string]float64
	for attempt := 1; attempt <= 5; attempt++ {
		b := mustRead(t, r, runProver(t))
		s := mustRead(t, r, runProver(t, "PERFBOT_SLOW=synthesis"))
		if len(b) != 6 || len(s) != 6 {
			t.Fatalf("%d and %d values, want 3 proofs × 2 phases", len(b), len(s))
		}
		base, slow = append(base, b...), append(slow, s...)
		changed = changedKeys(t, base, slow, "sec/op", 1.35)
		if r, ok := changed["cuzk/phase=synthesis sec/op"]; len(changed) == 1 && ok && r >= 1.6 && r <= 2.5 {
			return
		}
		t.Logf("attempt %d: changed beyond ×1.35: %v; adding a run a side", attempt, changed)
	}
	t.Fatalf("changed beyond ×1.35 after 5 attempts: %v, want synthesis alone, about ×2", changed)
}

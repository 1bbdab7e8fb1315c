package main

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/prover"
	"github.com/perfbot/perfbot/runner/execute"
)

// TestProveThreadsMustBePositive: --threads 0 or below exits 2 and says
// what to give instead.
func TestProveThreadsMustBePositive(t *testing.T) {
	t.Parallel()
	for _, n := range []string{"0", "-1"} {
		_, errOut, code := perfbot(t, "prove", "--threads", n, "--phases", "synthesis", "--constraints", "1")
		if code != exitUsage {
			t.Errorf("--threads %s: exit %d, want %d", n, code, exitUsage)
		}
		if want := "--threads " + n + ": give 1 or more synthesis goroutines"; !strings.Contains(errOut, want) {
			t.Errorf("--threads %s: stderr %q does not say %q", n, errOut, want)
		}
	}
}

// TestProveWithParallelSynthesisVerifies proves a two-block chain with
// real keys, synthesized on 4 goroutines and on 1: the proofs verify.
func TestProveWithParallelSynthesisVerifies(t *testing.T) {
	t.Parallel()
	keys := t.TempDir()
	for _, threads := range []string{"4", "1"} {
		_, errOut, code := perfbot(t, "prove", "--constraints", "2^15", "--threads", threads, "--count", "1", "--warmup", "0",
			"--verify", "--key-dir", keys, "--counters", "off")
		if code != 0 {
			t.Fatalf("--threads %s: exit %d: %s", threads, code, errOut)
		}
		if !strings.Contains(errOut, "synthesis_threads="+threads) {
			t.Errorf("--threads %s: stderr does not log synthesis_threads=%s:\n%s", threads, threads, errOut)
		}
	}
}

// TestProvePipelineNeedsTwoProofsAndAFullProof: --pipeline with --count 1,
// or with --phases synthesis, exits 2 and says why.
func TestProvePipelineNeedsTwoProofsAndAFullProof(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--count", "1"}, "a pipeline needs at least 2 proofs"},
		{[]string{"--count", "4", "--phases", "synthesis"}, "--pipeline with --phases synthesis"},
	} {
		args := append([]string{"prove", "--pipeline", "--constraints", "1"}, c.args...)
		out, errOut, code := perfbot(t, args...)
		if code != exitUsage || out != "" {
			t.Errorf("%v: exit %d, stdout %q; want exit %d and nothing printed", args, code, out, exitUsage)
		}
		if !strings.Contains(errOut, c.want) {
			t.Errorf("%v: stderr %q does not say %q", args, errOut, c.want)
		}
	}
}

// TestProvePipelinedOutputReadsInTheRunnerAndTheComparison runs perfbot
// prove --pipeline --count 3 --verify and reads its output as perfbot
// compare does (execute.Run: benchmark and span lines), then compares it
// with itself: no line or span is dropped, synthesis's spans are on lane
// host, the throughput line is a benchmark of its own (kept out of
// total's attribution), and peak-rss-B/op is a memory unit, lower better,
// shown in binary units.
func TestProvePipelinedOutputReadsInTheRunnerAndTheComparison(t *testing.T) {
	t.Parallel()
	out, errOut, code := perfbot(t, "prove", "--pipeline", "--count", "3", "--warmup", "0", "--constraints", "2^10",
		"--verify", "--key-dir", t.TempDir())
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "msg=pipeline proofs=3") || !strings.Contains(errOut, "proofs_per_s=") {
		t.Errorf("stderr does not log the pipeline's proofs/s:\n%s", errOut)
	}
	path := filepath.Join(t.TempDir(), "pipelined.txt")
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := execute.Run(context.Background(), execute.Spec{Args: []string{"cat", path}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Run.Status != analysis.StatusOK || len(res.Warnings) != 0 {
		t.Fatalf("status %s %q, warnings %q", res.Run.Status, res.Run.Detail, res.Warnings)
	}
	bench := "Prove/circuit=sha256/constraints=1024/backend=cpu"
	pipeline := prover.PipelineName("sha256", 1024, "cpu", 3)
	lanes := map[string]string{}
	for _, s := range res.Run.Spans {
		lanes[s.Phase] = s.Lane
	}
	if len(res.Run.Spans) != 3*9 || lanes["synthesis"] != "host" || lanes["ntt"] != "" {
		t.Errorf("%d spans, synthesis on lane %q, ntt on %q; want 27, host and the proof's own", len(res.Run.Spans), lanes["synthesis"], lanes["ntt"])
	}
	units := map[analysis.Key]int{}
	for _, s := range res.Run.Samples {
		units[s.Key]++
	}
	for _, k := range []analysis.Key{
		{Benchmark: bench, Phase: "total", Unit: "sec/op"},
		{Benchmark: bench, Phase: "total", Unit: prover.PeakRSSUnit},
		{Benchmark: bench, Phase: "msm_h", Unit: "sec/op"},
	} {
		if units[k] != 3 {
			t.Errorf("%d samples of %+v, want 3", units[k], k)
		}
	}
	for _, u := range []string{"sec/op", "proofs/s", prover.PeakRSSUnit, "B/op"} {
		if k := (analysis.Key{Benchmark: pipeline, Unit: u}); units[k] != 1 {
			t.Errorf("%d samples of %+v, want the throughput line's one", units[k], k)
		}
	}

	run := res.Run
	r := analysis.Compare(analysis.Input{BaseRev: "base", HeadRev: "head",
		Base: []analysis.Run{run, run}, Head: []analysis.Run{run, run}}, analysis.Options{})
	if len(r.Attribution) != 1 || r.Attribution[0].Benchmark != bench {
		t.Fatalf("attribution %+v, want one, of %s's total", r.Attribution, bench)
	}
	for _, p := range r.Attribution[0].Phases {
		if p.Phase == "" || p.Phase == "pipeline" {
			t.Errorf("total's attribution has phase %q: the throughput line is not a phase", p.Phase)
		}
	}
	for _, row := range r.Phases {
		if row.Unit == prover.PeakRSSUnit && row.Better != "lower" || row.Unit == "proofs/s" && row.Better != "higher" {
			t.Errorf("%s %s %s: better %s", row.Benchmark, row.Phase, row.Unit, row.Better)
		}
	}
	var text strings.Builder
	if err := render.RenderText(&text, r); err != nil {
		t.Fatal(err)
	}
	// The comparison's table of the unit shows bytes in binary units.
	_, table, ok := strings.Cut(text.String(), "\n"+prover.PeakRSSUnit+"\n")
	table, _, _ = strings.Cut(table, "\n\n")
	if !ok || !regexp.MustCompile(`/phase=total +[0-9.]+Mi `).MatchString(table) {
		t.Errorf("no %s table with total's peak RSS in MiB:\n%s", prover.PeakRSSUnit, text.String())
	}
}

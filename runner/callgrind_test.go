package runner

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/execute"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

func TestBaselineStoresOneCallgrindRunAfterTheTimedRuns(t *testing.T) {
	t.Parallel()
	if _, err := execute.LookValgrind(nil); err != nil {
		if os.Getenv("PERFBOT_REQUIRE_VALGRIND") != "" {
			t.Fatalf("PERFBOT_REQUIRE_VALGRIND is set: %v", err)
		}
		t.Skipf("no valgrind: %v", err)
	}
	const config = `build:
  - ["true"]
benchmarks:
  - name: sh
    command: [./bench.sh]
    callgrind: true
count: 2
warmup: 1
max_count: 2
timeout: 30s
`
	repo := workspacetest.New(t)
	const bench = "#!/bin/sh\necho \"BenchmarkSh/phase=total 1 $((1000 + $$ % 7)) ns/op\"\n"
	sha := repo.Commit(t, "a shell benchmark", map[string]string{".perfbot.yml": config, "bench.sh": bench})
	r := newPRRunner(t)
	var logged syncBuffer
	r.Logger = slog.New(slog.NewTextHandler(&logged, nil))
	res, err := r.Baseline(context.Background(), BaselineRequest{Source: repo.Dir, Rev: sha})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.RunIDs) != 3 || res.OK != 3 || res.Failed != 0 {
		t.Fatalf("baseline: %d runs, %d ok, %d failed; want the 2 timed runs and the callgrind run, all ok; logs:\n%s",
			len(res.RunIDs), res.OK, res.Failed, logged.String())
	}
	db := r.Store.(*store.DB)
	runs, err := db.Runs(context.Background(), store.RunQuery{Repo: repo.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if len(runs) != 3 || runs[0].Tool != "" || runs[1].Tool != "" || runs[2].Tool != analysis.ToolCallgrind {
		t.Fatalf("stored runs %+v; want two timed runs, then the callgrind run", runs)
	}
	units := map[string]float64{}
	for _, s := range runs[2].Samples {
		if s.Benchmark != "process/benchmark=sh" {
			t.Errorf("callgrind sample %+v: want only the process's (a shell script marks no spans)", s)
		}
		units[s.Unit] = s.Value
	}
	if units[analysis.SimProcessInstructionsUnit] < 1e5 || units[analysis.SimWallUnit] <= 0 || len(units) != 2 {
		t.Errorf("callgrind samples %v; want the process's instructions and wall time", units)
	}
	if !strings.Contains(logged.String(), "marked no span") {
		t.Errorf("no warning that the benchmark marks no span; logs:\n%s", logged.String())
	}
	// The same config's history: the timed runs only.
	hist, err := db.History(context.Background(), store.HistoryQuery{Repo: repo.Dir, ConfigHash: res.Config.Hash()})
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hist {
		if analysis.IsSimulatedUnit(k.Unit) || k.Unit == analysis.SimWallUnit || len(v) != 2 {
			t.Errorf("history %v: %v; want the 2 timed runs' series only", k, v)
		}
	}
}

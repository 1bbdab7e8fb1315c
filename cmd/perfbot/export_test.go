package main

import (
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// A run of several values of a benchmark (criterion's samples) is printed
// value by value, or with --per-run as one line of each unit's median, the
// value compare tests; a run of one value a unit prints the same either way.
func TestExportPerRunPrintsEachRunsMedians(t *testing.T) {
	t.Parallel()
	smp := func(bench, phase, unit string, v float64) analysis.Sample {
		return analysis.Sample{Key: analysis.Key{Benchmark: bench, Phase: phase, Unit: unit}, Value: v}
	}
	start := time.Date(2026, 12, 6, 0, 0, 0, 0, time.UTC)
	runs := []store.RunRecord{
		{StartedAt: start.Add(time.Minute), Samples: []analysis.Sample{
			smp("mix_500", "", "sec/op", 4), smp("mix_500", "", "sec/op", 1), smp("mix_500", "", "sec/op", 2),
			smp("Work", "solve", "sec/op", 0.5), smp("Work", "solve", "B/op", 64),
		}},
		{StartedAt: start, Samples: []analysis.Sample{ // the earlier run: printed first
			smp("mix_500", "", "sec/op", 3), smp("mix_500", "", "B/s", 10),
			smp("mix_500", "", "sec/op", 1), smp("mix_500", "", "B/s", 30),
		}},
	}
	for _, tc := range []struct {
		perRun bool
		want   string
	}{
		{false, `Benchmarkmix_500 1 3 sec/op 10 B/s
Benchmarkmix_500 1 1 sec/op 30 B/s
Benchmarkmix_500 1 4 sec/op
Benchmarkmix_500 1 1 sec/op
Benchmarkmix_500 1 2 sec/op
BenchmarkWork/phase=solve 1 0.5 sec/op 64 B/op
`},
		{true, `Benchmarkmix_500 1 2 sec/op 20 B/s
Benchmarkmix_500 1 2 sec/op
BenchmarkWork/phase=solve 1 0.5 sec/op 64 B/op
`},
	} {
		var b strings.Builder
		if err := writeBenchfmt(&b, append([]store.RunRecord(nil), runs...), tc.perRun); err != nil {
			t.Fatal(err)
		}
		if b.String() != tc.want {
			t.Errorf("perRun=%v:\n%s\nwant:\n%s", tc.perRun, b.String(), tc.want)
		}
	}
}

package analysis

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

// This file adds the GPU side to a regressed phase's explanation: the
// phase's kernel steps that changed (units "<step>-sec/op" on the phase's
// line, the device times the GPU backend reports per step) and the GPU
// telemetry of the runs that measured it (process samples such as
// GPUSMClockMeanUnit and GPUThrottledFractionUnit) that changed.

// stepSuffix ends the unit of a kernel step's device time on a phase
// line: "sort-sec/op".
const stepSuffix = "-sec/op"

// maxStepItems and maxTelemetryItems bound how many steps and telemetry
// series an explanation lists.
const (
	maxStepItems      = 3
	maxTelemetryItems = 4
)

// telemetryNames are the GPU telemetry units an explanation may list, in
// the order it lists them, with the names it shows.
var telemetryNames = []struct{ unit, name string }{
	{GPUSMClockMeanUnit, "SM clock"},
	{"gpu-sm-clock-min-MHz/run", "SM clock min"},
	{GPUThrottledFractionUnit, "throttled"},
	{"gpu-mem-clock-min-MHz/run", "memory clock min"},
	{"gpu-power-mean-W/run", "power"},
	{"gpu-temp-max-C/run", "temperature"},
	{GPUUtilMeanUnit, "busy"},
	{"gpu-mem-util-mean-pct/run", "memory busy"},
	{GPUEnergyUnit, "energy"},
	{"gpu-mem-used-max-B/run", "memory used"},
}

// isStepUnit reports whether unit is a kernel step's device time: it
// ends in "-sec/op" and is none of the counters explanationOrder knows
// (task-clock-sec/op).
func isStepUnit(unit string) bool {
	if !strings.HasSuffix(unit, stepSuffix) || unit == TimeUnit {
		return false
	}
	return !slices.ContainsFunc(explanationOrder, func(o struct{ unit, name string }) bool { return o.unit == unit })
}

// stepItems returns the kernel steps of a phase whose device time
// changed significantly, by the size of the change in seconds, largest
// first, at most maxStepItems; and whether the phase has kernel steps at
// all (a GPU phase).
func stepItems(rows []Row, benchmark, phase string) ([]ExplanationItem, bool) {
	var steps []Row
	gpu := false
	for _, row := range rows {
		if row.Benchmark != benchmark || row.Phase != phase || !isStepUnit(row.Unit) || row.Simulated {
			continue
		}
		gpu = true
		if significantRow(row) {
			steps = append(steps, row)
		}
	}
	slices.SortStableFunc(steps, func(a, b Row) int {
		return cmp.Compare(math.Abs(b.Shift), math.Abs(a.Shift))
	})
	var items []ExplanationItem
	for _, row := range steps[:min(len(steps), maxStepItems)] {
		items = append(items, ExplanationItem{
			Name:        strings.TrimSuffix(row.Unit, stepSuffix),
			DeltaPct:    row.Change(),
			Significant: true,
			Unit:        "sec",
			Base:        row.BaseValue,
			Head:        row.HeadValue,
		})
	}
	return items, gpu
}

// telemetryItems returns the GPU telemetry of the process benchmarks
// processes (the commands that measured a phase, as "process/benchmark=…")
// that changed significantly, in telemetryNames' order, and throttling
// whenever head's runs throttled (significant or not), at most
// maxTelemetryItems. A series of one GPU among several is named with its
// "gpu=N".
func telemetryItems(rows []Row, processes []string) []ExplanationItem {
	var items []ExplanationItem
	for _, t := range telemetryNames {
		for _, row := range rows {
			if row.Unit != t.unit || row.Phase != "" || !ofProcesses(row.Benchmark, processes) {
				continue
			}
			throttled := t.unit == GPUThrottledFractionUnit && row.Head.Median > 0
			if !significantRow(row) && !throttled {
				continue
			}
			name := t.name
			if _, dev, ok := strings.Cut(row.Benchmark, "/gpu="); ok {
				name += " (gpu=" + dev + ")"
			}
			items = append(items, ExplanationItem{
				Name:        name,
				DeltaPct:    row.Change(),
				Significant: significantRow(row),
				Unit:        strings.TrimPrefix(t.unit, "gpu-"),
				Base:        row.BaseValue,
				Head:        row.HeadValue,
			})
		}
	}
	return items[:min(len(items), maxTelemetryItems)]
}

// ofProcesses reports whether a process sample's benchmark belongs to
// one of processes: the process itself or one of its GPUs ("/gpu=N").
func ofProcesses(benchmark string, processes []string) bool {
	for _, p := range processes {
		if benchmark == p || strings.HasPrefix(benchmark, p+"/gpu=") {
			return true
		}
	}
	return false
}

// significantRow reports whether a row changed: a regression or an
// improvement.
func significantRow(r Row) bool {
	return r.Verdict == VerdictRegression || r.Verdict == VerdictImprovement
}

// processesOf returns, for every benchmark the ok timed runs measured,
// the process benchmarks of the commands that measured it
// ("process/benchmark=NAME", or "process" for runs whose command is
// unnamed).
func processesOf(runs ...[]Run) map[string][]string {
	out := make(map[string][]string)
	for _, side := range runs {
		for _, run := range side {
			if run.Status != StatusOK || run.Tool != "" {
				continue
			}
			proc := ProcessBenchmark
			if cmd := commandName(run); cmd != "" {
				proc += "/benchmark=" + cmd
			}
			for _, smp := range run.Samples {
				if !isProcessBenchmark(smp.Benchmark) && !slices.Contains(out[smp.Benchmark], proc) {
					out[smp.Benchmark] = append(out[smp.Benchmark], proc)
				}
			}
		}
	}
	return out
}

// processesOfRows is processesOf for a report without its runs (decoded
// from older JSON): every benchmark belongs to the one command whose
// process rows the report has, and to none when it has several.
func processesOfRows(rows []Row) func(string) []string {
	var procs []string
	for _, row := range rows {
		if !isProcessBenchmark(row.Benchmark) {
			continue
		}
		p, _, _ := strings.Cut(row.Benchmark, "/gpu=")
		if !slices.Contains(procs, p) {
			procs = append(procs, p)
		}
	}
	return func(string) []string {
		if len(procs) == 1 {
			return procs
		}
		return nil
	}
}

// gpuItemText formats a step or telemetry item: "sort +31.2% (+4.10ms)",
// "SM clock -8.0%", "throttled 0% → 35% of readings", with " (~)" when
// not significant.
func gpuItemText(it ExplanationItem) string {
	var s string
	switch it.Unit {
	case "sec":
		s = fmt.Sprintf("%s %s (%s)", it.Name, fmtx.FormatPct(it.DeltaPct), fmtx.FormatDelta(it.Head-it.Base, "sec"))
	case strings.TrimPrefix(GPUThrottledFractionUnit, "gpu-"):
		s = fmt.Sprintf("%s %s → %s of readings", it.Name, fmtx.FormatShare(100*it.Base), fmtx.FormatShare(100*it.Head))
	default:
		s = it.Name + " " + fmtx.FormatPct(it.DeltaPct)
	}
	if !it.Significant {
		s += " (~)"
	}
	return s
}

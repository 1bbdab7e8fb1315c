package analysis

import "strings"

// Units of the GPU telemetry that the runner records per benchmark
// process and device (one value per run), which Compare checks for
// caveats.
const (
	// GPUThrottledFractionUnit is the share of a run's GPU readings in
	// which a power, thermal or other limit held the clocks down.
	GPUThrottledFractionUnit = "gpu-throttled-fraction/run"
	// GPUSMClockMeanUnit is a run's mean SM clock in MHz while the GPU
	// was busy.
	GPUSMClockMeanUnit = "gpu-sm-clock-mean-MHz/run"
	// GPUEnergyUnit is the energy a run's GPU drew in joules, from the
	// first reading to the last: it grows with the run's length even
	// when the GPU does nothing.
	GPUEnergyUnit = "gpu-energy-J/run"
	// GPUUtilMeanUnit is the mean share of a run's readings in which a
	// kernel ran, in percent.
	GPUUtilMeanUnit = "gpu-util-mean-pct/run"
)

// HigherIsBetter reports whether higher values of unit are better. Rates
// are: a unit whose last "/"-separated part is a time ("s", "sec", "ms",
// "us", "µs", "ns"), such as "B/s", "MB/s" or "constraints/s". Every other
// unit is taken to be a cost, where lower is better: "sec/op", "B/op",
// "allocs/op", "instructions/op", "page-faults/op". These defaults agree
// with benchfmt.UnitMetadataMap.GetBetter for the units it knows
// (golang.org/x/perf/benchunit has no notion of direction); Options lists
// the exceptions a caller knows of. GPU clocks from the runner's telemetry
// ("gpu-sm-clock-mean-MHz/run") are better higher too: a lower clock is a
// slower card.
func HigherIsBetter(unit string) bool {
	if strings.HasPrefix(unit, "gpu-") && strings.Contains(unit, "-clock-") && strings.Contains(unit, "MHz") {
		return true
	}
	i := strings.LastIndexByte(unit, '/')
	if i < 0 {
		return false
	}
	switch unit[i+1:] {
	case "s", "sec", "ms", "us", "µs", "ns":
		return true
	}
	return false
}

// Units of the samples of a run under valgrind's callgrind (Run.Tool
// ToolCallgrind). Their values are simulated, not timed: callgrind counts
// the instructions the program executes, which repeat from run to run
// where time does not, so one run a side is compared exactly, never with
// statistics.
const (
	// SimInstructionsUnit is a span's simulated instruction count per
	// operation: per phase of the prover, from the span markers (see
	// runner/execute.RunCallgrind).
	SimInstructionsUnit = "sim-instructions/op"
	// SimProcessInstructionsUnit is the whole process's simulated
	// instruction count, on the process benchmark.
	SimProcessInstructionsUnit = "sim-instructions/run"
	// SimWallUnit is the wall time of the run under callgrind, on the
	// process benchmark: set against the timed runs' wall-sec/run, it is
	// the slowdown factor of the simulation.
	SimWallUnit = "sim-wall-sec/run"
)

// IsSimulatedUnit reports whether unit is a simulated instruction count,
// compared exactly (see SimInstructionsUnit).
func IsSimulatedUnit(unit string) bool {
	return unit == SimInstructionsUnit || unit == SimProcessInstructionsUnit
}

package analysis

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/analysis/internal/fmtx"
	"github.com/perfbot/perfbot/analysis/stats"
)

// This file compares the simulated instruction counts of runs under
// valgrind's callgrind (Run.Tool ToolCallgrind): one run a side whose
// counts repeat exactly, so the change is exact and needs no test. Such a
// row decides nothing by itself: it is never primary, and its verdict is
// a change only from SimFloorPct and SimFloorInstructions.

// SimFloorPct is the smallest change of a simulated count, in percent,
// that a simulated row calls a regression or an improvement. Counted
// twice, perfbot prove's phases at 2^10 constraints differed by at most
// 0.0016% (see runner/execute.RunCallgrind for what is left out to get
// there); 0.5% is some 300 times that, so that a program the
// measurement leaves noisier (a garbage collection the benchmark turned
// back on, map hashing with a random seed) does not cry wolf, and still
// half the 1% changes that timing on the development machine cannot
// see.
const SimFloorPct = 0.5

// SimFloorInstructions is the smallest change of a simulated count, in
// instructions, that a simulated row calls a regression or an
// improvement, however small the span: the preemption checks that Go's
// scheduler requests by wall time add up to a few hundred instructions
// to a long span.
const SimFloorInstructions = 1000

// FloorSimulated is the Floor.Source of a simulated row: SimFloorPct.
const FloorSimulated = "simulated"

// ReasonExactBelowFloor (no-change) is the Reason of a simulated row
// whose exact change is below SimFloorPct or SimFloorInstructions.
const ReasonExactBelowFloor = "exact, below floor"

// A Simulation describes the callgrind runs of one benchmark command:
// how long they took against the command's timed runs.
type Simulation struct {
	// Benchmark is the command's process benchmark, as its process
	// samples name it ("process/benchmark=prove").
	Benchmark string `json:"benchmark"`
	// Tool is the tool the runs ran under: ToolCallgrind.
	Tool string `json:"tool"`
	// Base and Head describe each side's runs.
	Base SimulationSide `json:"base"`
	Head SimulationSide `json:"head"`
}

// A SimulationSide is one side of a Simulation.
type SimulationSide struct {
	// Runs counts the side's ok callgrind runs of the command.
	Runs int `json:"runs"`
	// Wall is their median wall time in seconds (SimWallUnit), and
	// TimedWall the median wall time of the command's ok timed runs
	// (wall-sec/run); either is NaN (JSON null) when unknown.
	Wall      float64 `json:"wall_sec"`
	TimedWall float64 `json:"timed_wall_sec"`
	// Slowdown is Wall / TimedWall: how many times longer the program
	// ran under callgrind; NaN (JSON null) when unknown.
	Slowdown float64 `json:"slowdown"`
}

// collectSimulated adds a callgrind run to s: its counts to s.sim, one
// value per ok run and key, or its failure.
func (c *comparer) collectSimulated(s *side, run Run) {
	s.simRuns++
	if run.Status != StatusOK {
		f := Failure{Side: s.name, Tool: run.Tool, Status: run.Status, Detail: run.Detail}
		for i := range s.simFailures {
			if s.simFailures[i].Status == f.Status && s.simFailures[i].Detail == f.Detail {
				s.simFailures[i].Count++
				return
			}
		}
		f.Count = 1
		s.simFailures = append(s.simFailures, f)
		return
	}
	s.simOK++
	values := make(map[Key][]float64)
	var keys []Key
	for _, smp := range run.Samples {
		if !stats.Finite(smp.Value) {
			s.nonFinite++
			continue
		}
		if _, ok := values[smp.Key]; !ok {
			keys = append(keys, smp.Key)
		}
		values[smp.Key] = append(values[smp.Key], smp.Value)
		if _, ok := c.simOrder[smp.Key]; !ok {
			c.simOrder[smp.Key] = len(c.simKeys)
			c.simKeys = append(c.simKeys, smp.Key)
		}
	}
	for _, k := range keys {
		vs := values[k]
		slices.Sort(vs)
		s.sim[k] = append(s.sim[k], stats.Median(vs))
	}
}

// simRows returns a row for every simulated count measured on both
// sides, in the order the counts first appeared.
func (c *comparer) simRows(base, head *side) []Row {
	var rows []Row
	for _, k := range c.simKeys {
		bv, hv := base.sim[k], head.sim[k]
		if !IsSimulatedUnit(k.Unit) || bv == nil || hv == nil {
			continue
		}
		rows = append(rows, simRow(k, bv, hv))
	}
	return rows
}

// simRow compares one simulated count exactly. With one run a side (as
// the runner makes them) the row's medians are the counts; Lo and Hi
// span a side's runs when it has several.
func simRow(k Key, bv, hv []float64) Row {
	summary := func(v []float64) Summary {
		v = slices.Sorted(slices.Values(v))
		return Summary{Median: stats.Median(v), Lo: v[0], Hi: v[len(v)-1], N: len(v)}
	}
	row := Row{
		Key:        k,
		Simulated:  true,
		Better:     "lower",
		Base:       summary(bv),
		Head:       summary(hv),
		PRaw:       math.NaN(),
		PValue:     math.NaN(),
		Threshold:  math.NaN(),
		MDEPct:     math.NaN(),
		Floor:      Floor{Pct: SimFloorPct, Source: FloorSimulated},
		Confidence: 1, // exact counts: the interval is the one point
	}
	// Exact: the change is the medians' change, with no interval (an
	// interval of that one point).
	pct := deltaPct(row.Base.Median, row.Head.Median)
	d := row.Head.Median - row.Base.Median
	row.ShiftPct, row.DeltaLoPct, row.DeltaHiPct = pct, pct, pct
	row.BaseValue, row.HeadValue = row.Base.Median, row.Head.Median
	row.Shift, row.ShiftLo, row.ShiftHi = d, d, d
	switch {
	case (math.Abs(pct) >= SimFloorPct || math.IsNaN(pct)) && math.Abs(d) >= SimFloorInstructions:
		row.Verdict = VerdictImprovement
		if d > 0 {
			row.Verdict = VerdictRegression
		}
	default:
		row.Verdict, row.Reason = VerdictNoChange, ReasonExactBelowFloor
	}
	return row
}

// simulations describes, per benchmark command, the sides' callgrind
// runs against their timed runs.
func (c *comparer) simulations(base, head *side) []Simulation {
	var out []Simulation
	for _, k := range c.simKeys {
		if k.Unit != SimWallUnit {
			continue
		}
		timed := Key{Benchmark: k.Benchmark, Unit: "wall-sec/run"}
		sideOf := func(s *side) SimulationSide {
			ss := SimulationSide{Runs: len(s.sim[k]), Wall: stats.MedianOf(s.sim[k]), TimedWall: stats.MedianOf(s.series[timed])}
			ss.Slowdown = ss.Wall / ss.TimedWall
			if !stats.Finite(ss.Slowdown) {
				ss.Slowdown = math.NaN()
			}
			return ss
		}
		out = append(out, Simulation{Benchmark: k.Benchmark, Tool: ToolCallgrind, Base: sideOf(base), Head: sideOf(head)})
	}
	return out
}

// warnSimulated warns about callgrind runs that failed, that ran on one
// side only, or that counted only the whole process.
func (c *comparer) warnSimulated(base, head *side) {
	for _, s := range []*side{base, head} {
		if n := s.simRuns - s.simOK; n > 0 {
			why := s.simFailures[0]
			c.warnf("%d of %s's %s failed (%s: %s): simulated counts are compared only where both sides have them",
				n, s.name, fmtx.Plural(s.simRuns, "callgrind run"), why.Status, firstLine(why.Detail))
		}
	}
	switch {
	case base.simOK > 0 && head.simRuns == 0:
		c.warnf("only base has a callgrind run: its simulated counts are not compared")
	case head.simOK > 0 && base.simRuns == 0:
		c.warnf("only head has a callgrind run: its simulated counts are not compared")
	}
	var whole []string
	for _, k := range c.simKeys {
		if k.Unit != SimProcessInstructionsUnit {
			continue
		}
		perSpan := slices.ContainsFunc(c.simKeys, func(o Key) bool { return o.Unit == SimInstructionsUnit })
		if !perSpan {
			whole = append(whole, strings.TrimPrefix(k.Benchmark, ProcessBenchmark+"/benchmark="))
		}
	}
	if len(whole) > 0 {
		c.warnf("callgrind counted only the whole process of %s: the program marks no spans (perfbotSpanBegin and perfbotSpanEnd around each span it prints a line for; see runner/execute.RunCallgrind)",
			fmtx.List(whole, listLimit))
	}
}

// firstLine returns the first line of s.
func firstLine(s string) string {
	line, _, _ := strings.Cut(strings.TrimSpace(s), "\n")
	return line
}

// MarshalJSON writes NaN times and slowdowns as null.
func (s SimulationSide) MarshalJSON() ([]byte, error) {
	return json.Marshal(struct {
		Runs      int      `json:"runs"`
		Wall      *float64 `json:"wall_sec"`
		TimedWall *float64 `json:"timed_wall_sec"`
		Slowdown  *float64 `json:"slowdown"`
	}{s.Runs, nullable(s.Wall), nullable(s.TimedWall), nullable(s.Slowdown)})
}

// UnmarshalJSON reads null times and slowdowns as NaN.
func (s *SimulationSide) UnmarshalJSON(b []byte) error {
	var v struct {
		Runs      int      `json:"runs"`
		Wall      *float64 `json:"wall_sec"`
		TimedWall *float64 `json:"timed_wall_sec"`
		Slowdown  *float64 `json:"slowdown"`
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*s = SimulationSide{Runs: v.Runs, Wall: orElse(v.Wall, math.NaN()), TimedWall: orElse(v.TimedWall, math.NaN()), Slowdown: orElse(v.Slowdown, math.NaN())}
	return nil
}

// formatExactPct formats an exact change in percent, to two decimals.
func formatExactPct(x float64) string {
	switch {
	case !stats.Finite(x):
		return "n/a"
	case x == 0:
		return "0.00%"
	case math.Abs(x) < 0.005:
		if x > 0 {
			return "+<0.01%"
		}
		return "-<0.01%"
	}
	return fmt.Sprintf("%+.2f%%", x)
}

package analysis

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis/changepoint"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

var (
	TrendKey = Key{Benchmark: "Prove/backend=cpu", Phase: "total", Unit: "sec/op"}
	TrendT0  = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
)

func Sha(i int) string { return fmt.Sprintf("%040x", i+1) }

// StepRuns returns runs runs per commit of n commits on machine, the
// commits an hour apart, values around base (0.5% noise) and step×base
// from commit at on.
func StepRuns(r *rand.Rand, n, runs int, machine string, base, step float64, at int) []TrendRun {
	var out []TrendRun
	for i := range n {
		v := base
		if i >= at {
			v *= step
		}
		for j := range runs {
			out = append(out, TrendRun{
				Commit: Sha(i), Machine: machine, Started: TrendT0.Add(time.Duration(i)*time.Hour + time.Duration(j)*time.Minute),
				Value: v * (1 + 0.005*r.NormFloat64()),
			})
		}
	}
	return out
}

func TestTrendMediansAndIntervalsAreComparesSummaries(t *testing.T) {
	t.Parallel()
	vals := []float64{0.81, 0.79, 0.80, 0.83, 0.78, 0.80, 0.82, 0.80}
	var runs []TrendRun
	var base []Run
	for j, v := range vals {
		runs = append(runs, TrendRun{Commit: Sha(0), Machine: "m", Started: TrendT0.Add(time.Duration(j) * time.Minute), Value: v})
		base = append(base, Run{Revision: Sha(0), Status: StatusOK, Samples: []Sample{{Key: TrendKey, Value: v}}})
	}
	tr, err := NewTrend(TrendInput{Key: TrendKey, Runs: runs}, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep := Compare(Input{Base: base, Head: base}, Options{})
	want := rep.Phases[0].Base
	c := tr.Commits[0]
	if got := c.Summary(); got != want {
		t.Errorf("trend summary %+v, compare's %+v: want the same median and interval", got, want)
	}
	if !(c.Lo < c.Median && c.Median < c.Hi) || c.Median != 0.80 {
		t.Errorf("summary %+v: want median 0.80 inside a finite interval", c)
	}
}

func TestNewTrendChartsTheMachineWithMostRunsAndNamesTheOthers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	runs := append(StepRuns(r, 12, 3, "gpu-b", 1, 1, 0), StepRuns(r, 12, 3, "gpu-a", 2, 1, 0)...)
	runs = append(runs, StepRuns(r, 2, 1, "gpu-c", 3, 1, 0)...)
	// gpu-a and gpu-b tie at 36 runs; gpu-a's newest run is newer.
	runs[len(runs)-3].Started = TrendT0.Add(48 * time.Hour)
	tr, err := NewTrend(TrendInput{Key: TrendKey, Runs: runs}, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tr.Machine != "gpu-a" || len(tr.Commits) != 12 || math.Abs(tr.Commits[0].Median-2) > 0.05 {
		t.Errorf("charted %q (%d commits, first median %v); want gpu-a's 12 commits around 2", tr.Machine, len(tr.Commits), tr.Commits[0].Median)
	}
	wantMachines := []TrendMachine{{"gpu-a", 36, 12}, {"gpu-b", 36, 12}, {"gpu-c", 2, 2}}
	if !reflect.DeepEqual(tr.Machines, wantMachines) {
		t.Errorf("machines %+v, want %+v", tr.Machines, wantMachines)
	}
	if notes := strings.Join(tr.Notes, "\n"); !strings.Contains(notes, `runs of "gpu-b" (36 runs), "gpu-c" (2 runs) in the window are not`) {
		t.Errorf("notes %q: want the machines left out named", notes)
	}

	tr, err = NewTrend(TrendInput{Key: TrendKey, Runs: runs, Machine: "gpu-c"}, TrendOptions{})
	if err != nil || tr.Machine != "gpu-c" || len(tr.Commits) != 2 {
		t.Errorf("Machine gpu-c: %+v, %v", tr, err)
	}
	_, err = NewTrend(TrendInput{Key: TrendKey, Runs: runs, Machine: "gpu-z"}, TrendOptions{})
	if !errors.Is(err, ErrUnknownMachine) || !strings.Contains(err.Error(), `unknown machine "gpu-z": no run in the window ran there; they ran on "gpu-a" (36 runs), "gpu-b" (36 runs), "gpu-c" (2 runs)`) {
		t.Errorf("Machine gpu-z: error %v; want ErrUnknownMachine listing the machines", err)
	}
	if _, err := NewTrend(TrendInput{Key: TrendKey}, TrendOptions{}); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: error %v, want ErrNoRuns", err)
	}
}

func TestNewTrendFollowsTheHistoryAndLeavesOutCommitsNotOnIt(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2, 2))
	runs := StepRuns(r, 6, 2, "m", 1, 1, 0)
	// History order: 5, 4, 0, 2 (1 and 3 are on another branch); the runs
	// went 0..5.
	history := []HistoryCommit{{Sha(9), "no runs"}, {Sha(5), "five"}, {Sha(4), "four"}, {Sha(0), "zero"}, {Sha(2), "two"}}
	tr, err := NewTrend(TrendInput{Key: TrendKey, Runs: runs, History: history}, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for i, c := range tr.Commits {
		got = append(got, c.Subject)
		if c.Index != i {
			t.Errorf("commit %d has index %d", i, c.Index)
		}
	}
	if want := []string{"five", "four", "zero", "two"}; !reflect.DeepEqual(got, want) {
		t.Errorf("commits %v, want history order %v", got, want)
	}
	if tr.Order != OrderFirstParent || tr.Head != Sha(2) || !reflect.DeepEqual(tr.LeftOut, []string{Sha(1), Sha(3)}) {
		t.Errorf("order %q head %s left out %v; want first-parent, head %s, left out 1 and 3", tr.Order, tr.Head, tr.LeftOut, Sha(2))
	}
	if len(tr.Notes) == 0 || !strings.Contains(tr.Notes[0], "2 commits with runs are not on the first-parent history of "+fmtx.ShortRev(Sha(2))) {
		t.Errorf("notes %q: want the left-out commits counted", tr.Notes)
	}
	_, err = NewTrend(TrendInput{Key: TrendKey, Runs: runs, History: []HistoryCommit{{Sha(9), "x"}}}, TrendOptions{})
	if !errors.Is(err, ErrNotOnHistory) || !strings.Contains(err.Error(), "none of the 6 commits") {
		t.Errorf("history without the commits: error %v, want ErrNotOnHistory", err)
	}
}

func TestNewTrendMarksAStepOnItsCommitWithItsDirection(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 3))
	// A rate: higher is better, so a step up is an improvement.
	key := Key{Benchmark: "Prove", Phase: "synthesis", Unit: "constraints/s"}
	tr, err := NewTrend(TrendInput{Key: key, Runs: StepRuns(r, 30, 6, "m", 1e6, 1.2, 17)}, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.ChangePoints) != 1 {
		t.Fatalf("change points %+v, want one", tr.ChangePoints)
	}
	cp := tr.ChangePoints[0]
	if cp.Index != 17 || cp.Commit != Sha(17) || !tr.Commits[17].ChangePoint || cp.Direction != "improvement" ||
		math.Abs(cp.ChangePct-20) > 1 || cp.PValue > 0.01 {
		t.Errorf("change point %+v: want commit 17, +20%% improvement, p ≤ 0.01", cp)
	}
	for i, c := range tr.Commits {
		if c.ChangePoint != (i == 17) {
			t.Errorf("commit %d marked %v", i, c.ChangePoint)
		}
	}
	wantSegs := []TrendSegment{{0, 17, cp.Before}, {17, 30, cp.After}}
	if !reflect.DeepEqual(tr.Segments, wantSegs) {
		t.Errorf("segments %+v, want %+v", tr.Segments, wantSegs)
	}
	if tr.Better != "higher" {
		t.Errorf("better %q, want higher for constraints/s", tr.Better)
	}
	// A minimum change above the step drops it: one segment.
	tr, err = NewTrend(TrendInput{Key: key, Runs: StepRuns(r, 30, 6, "m", 1e6, 1.2, 17)},
		TrendOptions{ChangePoints: changepoint.Options{MinChange: 0.5}})
	if err != nil || len(tr.ChangePoints) != 0 || len(tr.Segments) != 1 || tr.Detector.MinChange != 0.5 {
		t.Errorf("MinChange 0.5: %+v, %v; want no change point, one segment", tr, err)
	}
}

func TestDetectorOptionsAreChangepointsDefaults(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 4))
	for n := range 5 {
		series := make([]float64, 40)
		for i := range series {
			series[i] = 100 + r.NormFloat64()
			if i >= 10+5*n {
				series[i] += float64(n)
			}
		}
		want, err1 := changepoint.Detect(series, changepoint.Options{})
		got, err2 := changepoint.Detect(series, detectorOptions(changepoint.Options{}))
		if err1 != nil || err2 != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("series %d: with the recorded defaults %+v (%v), with zero options %+v (%v); want the same", n, got, err2, want, err1)
		}
	}
	o := detectorOptions(changepoint.Options{Alpha: 0.001})
	if o.Permutations != 1999 {
		t.Errorf("alpha 0.001: %d permutations, want 1999", o.Permutations)
	}
	if _, err := changepoint.Detect([]float64{1, 2, 3}, o); err != nil {
		t.Errorf("alpha 0.001 with its permutations: %v", err)
	}
}

func TestAxisScaleUsesTheTextOutputsPrefix(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		unit   string
		values []float64
		factor float64
		label  string
	}{
		{"sec/op", []float64{0.81, 0.95}, 1e-3, "ms/op"},
		{"sec/op", []float64{2.3, 2.5}, 1, "sec/op"},
		{"B/op", []float64{3 << 20, 4 << 20}, 1 << 20, "MiB/op"},
		{"instructions/op", []float64{1.2e9, 1.3e9}, 1e9, "G instructions/op"},
	} {
		tr := &Trend{Key: Key{Unit: tc.unit}}
		for _, v := range tc.values {
			tr.Commits = append(tr.Commits, TrendCommit{Median: v})
		}
		if f, l := tr.AxisScale(); f != tc.factor || l != tc.label {
			t.Errorf("%s %v: AxisScale = %v, %q; want %v, %q", tc.unit, tc.values, f, l, tc.factor, tc.label)
		}
	}
}

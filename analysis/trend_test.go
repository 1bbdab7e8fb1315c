package analysis

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis/changepoint"
)

var (
	trendKey = Key{Benchmark: "Prove/backend=cpu", Phase: "total", Unit: "sec/op"}
	trendT0  = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)
)

func sha(i int) string { return fmt.Sprintf("%040x", i+1) }

// stepRuns returns runs runs per commit of n commits on machine, the
// commits an hour apart, values around base (0.5% noise) and step×base
// from commit at on.
func stepRuns(r *rand.Rand, n, runs int, machine string, base, step float64, at int) []TrendRun {
	var out []TrendRun
	for i := range n {
		v := base
		if i >= at {
			v *= step
		}
		for j := range runs {
			out = append(out, TrendRun{
				Commit: sha(i), Machine: machine, Started: trendT0.Add(time.Duration(i)*time.Hour + time.Duration(j)*time.Minute),
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
		runs = append(runs, TrendRun{Commit: sha(0), Machine: "m", Started: trendT0.Add(time.Duration(j) * time.Minute), Value: v})
		base = append(base, Run{Revision: sha(0), Status: StatusOK, Samples: []Sample{{Key: trendKey, Value: v}}})
	}
	tr, err := NewTrend(TrendInput{Key: trendKey, Runs: runs}, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	rep := Compare(Input{Base: base, Head: base}, Options{})
	want := rep.Phases[0].Base
	c := tr.Commits[0]
	if got := c.summary(); got != want {
		t.Errorf("trend summary %+v, compare's %+v: want the same median and interval", got, want)
	}
	if !(c.Lo < c.Median && c.Median < c.Hi) || c.Median != 0.80 {
		t.Errorf("summary %+v: want median 0.80 inside a finite interval", c)
	}
}

func TestNewTrendChartsTheMachineWithMostRunsAndNamesTheOthers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 1))
	runs := append(stepRuns(r, 12, 3, "gpu-b", 1, 1, 0), stepRuns(r, 12, 3, "gpu-a", 2, 1, 0)...)
	runs = append(runs, stepRuns(r, 2, 1, "gpu-c", 3, 1, 0)...)
	// gpu-a and gpu-b tie at 36 runs; gpu-a's newest run is newer.
	runs[len(runs)-3].Started = trendT0.Add(48 * time.Hour)
	tr, err := NewTrend(TrendInput{Key: trendKey, Runs: runs}, TrendOptions{})
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

	tr, err = NewTrend(TrendInput{Key: trendKey, Runs: runs, Machine: "gpu-c"}, TrendOptions{})
	if err != nil || tr.Machine != "gpu-c" || len(tr.Commits) != 2 {
		t.Errorf("Machine gpu-c: %+v, %v", tr, err)
	}
	_, err = NewTrend(TrendInput{Key: trendKey, Runs: runs, Machine: "gpu-z"}, TrendOptions{})
	if !errors.Is(err, ErrUnknownMachine) || !strings.Contains(err.Error(), `unknown machine "gpu-z": no run in the window ran there; they ran on "gpu-a" (36 runs), "gpu-b" (36 runs), "gpu-c" (2 runs)`) {
		t.Errorf("Machine gpu-z: error %v; want ErrUnknownMachine listing the machines", err)
	}
	if _, err := NewTrend(TrendInput{Key: trendKey}, TrendOptions{}); !errors.Is(err, ErrNoRuns) {
		t.Errorf("no runs: error %v, want ErrNoRuns", err)
	}
}

func TestNewTrendFollowsTheHistoryAndLeavesOutCommitsNotOnIt(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(2, 2))
	runs := stepRuns(r, 6, 2, "m", 1, 1, 0)
	// History order: 5, 4, 0, 2 (1 and 3 are on another branch); the runs
	// went 0..5.
	history := []HistoryCommit{{sha(9), "no runs"}, {sha(5), "five"}, {sha(4), "four"}, {sha(0), "zero"}, {sha(2), "two"}}
	tr, err := NewTrend(TrendInput{Key: trendKey, Runs: runs, History: history}, TrendOptions{})
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
	if tr.Order != OrderFirstParent || tr.Head != sha(2) || !reflect.DeepEqual(tr.LeftOut, []string{sha(1), sha(3)}) {
		t.Errorf("order %q head %s left out %v; want first-parent, head %s, left out 1 and 3", tr.Order, tr.Head, tr.LeftOut, sha(2))
	}
	if len(tr.Notes) == 0 || !strings.Contains(tr.Notes[0], "2 commits with runs are not on the first-parent history of "+shortRev(sha(2))) {
		t.Errorf("notes %q: want the left-out commits counted", tr.Notes)
	}
	_, err = NewTrend(TrendInput{Key: trendKey, Runs: runs, History: []HistoryCommit{{sha(9), "x"}}}, TrendOptions{})
	if !errors.Is(err, ErrNotOnHistory) || !strings.Contains(err.Error(), "none of the 6 commits") {
		t.Errorf("history without the commits: error %v, want ErrNotOnHistory", err)
	}
}

func TestNewTrendMarksAStepOnItsCommitWithItsDirection(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 3))
	// A rate: higher is better, so a step up is an improvement.
	key := Key{Benchmark: "Prove", Phase: "synthesis", Unit: "constraints/s"}
	tr, err := NewTrend(TrendInput{Key: key, Runs: stepRuns(r, 30, 6, "m", 1e6, 1.2, 17)}, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(tr.ChangePoints) != 1 {
		t.Fatalf("change points %+v, want one", tr.ChangePoints)
	}
	cp := tr.ChangePoints[0]
	if cp.Index != 17 || cp.Commit != sha(17) || !tr.Commits[17].ChangePoint || cp.Direction != "improvement" ||
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
	tr, err = NewTrend(TrendInput{Key: key, Runs: stepRuns(r, 30, 6, "m", 1e6, 1.2, 17)},
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

func TestTrendJSONWritesMissingIntervalsAsNullAndReadsThemBack(t *testing.T) {
	t.Parallel()
	runs := []TrendRun{
		{Commit: sha(0), Machine: "m", Started: trendT0, Value: 1},
		{Commit: sha(0), Machine: "m", Started: trendT0.Add(time.Minute), Value: 2},
	}
	tr, err := NewTrend(TrendInput{Repo: "r", Key: trendKey, Runs: runs}, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := RenderTrendJSON(&b, tr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{`"lo": null`, `"hi": null`, `"median": 1.5`, `"runs": 2`, `"change_points": []`, `"left_out": []`} {
		if !strings.Contains(out, want) {
			t.Errorf("JSON lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out, `"since"`) {
		t.Errorf("JSON of a trend of all runs has a since:\n%s", out)
	}
	var back Trend
	if err := json.Unmarshal(b.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if c := back.Commits[0]; !math.IsInf(c.Lo, -1) || !math.IsInf(c.Hi, 1) || c.Median != 1.5 {
		t.Errorf("read back %+v, want infinite bounds and median 1.5", c)
	}
	if !strings.Contains(strings.Join(tr.Notes, " "), "1 of 1 commit has too few runs for a 95% interval of the median (at least 6 are needed)") {
		t.Errorf("notes %q: want the commit without an interval counted", tr.Notes)
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

func TestRenderTrendCSVHasTheDocumentedColumns(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(5, 5))
	tr, err := NewTrend(TrendInput{Key: trendKey, Runs: stepRuns(r, 20, 6, "m", 1, 1.1, 10)}, TrendOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := RenderTrendCSV(&b, tr); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(b.String(), "\n"), "\n")
	if len(lines) != 21 || lines[0] != "index,commit,first_run,runs,median,lo,hi,unit,change_point,change_pct,p_value,direction" {
		t.Fatalf("CSV:\n%s\nwant the header and 20 rows", b.String())
	}
	f := strings.Split(lines[11], ",")
	if f[0] != "10" || f[1] != sha(10) || f[2] != "2026-11-02T19:00:00Z" || f[3] != "6" || f[7] != "sec/op" ||
		f[8] != "true" || !strings.HasPrefix(f[9], "10.") && !strings.HasPrefix(f[9], "9.") || f[11] != "regression" {
		t.Errorf("row of the change point: %q", f)
	}
	if f := strings.Split(lines[1], ","); f[8] != "false" || f[9] != "" || f[10] != "" || f[11] != "" {
		t.Errorf("row of an ordinary commit: %q; want empty change columns", f)
	}
}

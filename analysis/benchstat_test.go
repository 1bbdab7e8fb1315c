package analysis

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchmath"
)

// readRuns reads a benchmark-format file into runs: the k-th result of
// each benchmark name belongs to run k, as one proof prints one line per
// phase.
func readRuns(t *testing.T, path, rev string) []Run {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var runs []Run
	seen := make(map[string]int)
	rd := benchfmt.NewReader(f, path)
	for rd.Scan() {
		res, ok := rd.Result().(*benchfmt.Result)
		if !ok {
			continue
		}
		name := string(res.Name)
		i := seen[name]
		seen[name]++
		for len(runs) <= i {
			runs = append(runs, Run{Revision: rev, Status: StatusOK})
		}
		bench, phase := SplitName(res.Name)
		for _, v := range res.Values {
			runs[i].Samples = append(runs[i].Samples, Sample{Key{bench, phase, v.Unit}, v.Value})
		}
	}
	if err := rd.Err(); err != nil {
		t.Fatal(err)
	}
	return runs
}

// TestCompareAgreesWithBenchstat checks Compare against numbers printed by
// the real benchstat command on testdata/benchstat/{base,head}.txt (8
// proofs a side, two phases; one head msm_h run is an outlier). They were
// obtained by hand, from the repository root:
//
//	cd analysis/testdata/benchstat
//	go tool benchstat base.txt head.txt
//	go tool benchstat -format csv base.txt head.txt
//
// and the output is kept in testdata/benchstat/benchstat.out:
//
//	Prove/circuit=sha256/phase=synthesis   813.1m ± 0%   813.1m ± 1%       ~ (p=0.878 n=8)
//	Prove/circuit=sha256/phase=msm_h       401.6m ± 1%   440.9m ± 9%  +9.79% (p=0.001 n=8)
//
// CSV medians: synthesis 0.81305286 → 0.8131107265, msm_h
// 0.40161110850000004 → 0.4409388885.
func TestCompareAgreesWithBenchstat(t *testing.T) {
	t.Parallel()
	dir := filepath.Join("testdata", "benchstat")
	r := Compare(Input{
		Base: readRuns(t, filepath.Join(dir, "base.txt"), BaseRev),
		Head: readRuns(t, filepath.Join(dir, "head.txt"), HeadRev),
	}, Options{MinRuns: 8})
	want := []struct {
		phase              string
		base, head         float64 // medians, from the CSV
		baseCI, headCI     string  // ±, as benchstat prints them
		p, delta           string  // as benchstat prints them
		baseN, headN       int
		significantInStats bool
	}{
		{"synthesis", 0.81305286, 0.8131107265, "0%", "1%", "0.878", "~", 8, 8, false},
		{"msm_h", 0.40161110850000004, 0.4409388885, "1%", "9%", "0.001", "+9.79%", 8, 8, true},
	}
	if len(r.Phases) != len(want) {
		t.Fatalf("got %d rows, want %d", len(r.Phases), len(want))
	}
	for _, w := range want {
		row := Find(r, w.phase)
		if row == nil {
			t.Fatalf("no row for %s", w.phase)
		}
		if row.Base.Median != w.base || row.Head.Median != w.head {
			t.Errorf("%s medians %v → %v, benchstat %v → %v", w.phase, row.Base.Median, row.Head.Median, w.base, w.head)
		}
		if row.Base.N != w.baseN || row.Head.N != w.headN {
			t.Errorf("%s n = %d+%d, benchstat %d+%d", w.phase, row.Base.N, row.Head.N, w.baseN, w.headN)
		}
		// benchstat prints an interval as the larger relative distance of
		// its bounds from the median, rounded to a whole percent.
		pct := func(s Summary) string {
			return benchmath.Summary{Center: s.Median, Lo: s.Lo, Hi: s.Hi}.PctRangeString()
		}
		if pct(row.Base) != w.baseCI || pct(row.Head) != w.headCI {
			t.Errorf("%s intervals ±%s / ±%s, benchstat ±%s / ±%s", w.phase, pct(row.Base), pct(row.Head), w.baseCI, w.headCI)
		}
		if got := fmt.Sprintf("%.3f", row.PRaw); got != w.p {
			t.Errorf("%s p_raw %s, benchstat p=%s", w.phase, got, w.p)
		}
		if w.delta != "~" {
			if got := fmt.Sprintf("%+.2f%%", deltaPct(row.Base.Median, row.Head.Median)); got != w.delta {
				t.Errorf("%s Δ %s, benchstat %s", w.phase, got, w.delta)
			}
		}
		if (row.PRaw < 0.05) != w.significantInStats {
			t.Errorf("%s: significant %v, benchstat says %v", w.phase, row.PRaw < 0.05, w.significantInStats)
		}
	}
	// Holm over the family of two: the smaller p doubles, the larger
	// stays (it is at least the doubled smaller one here).
	syn, msm := Find(r, "synthesis"), Find(r, "msm_h")
	if msm.PValue != 2*msm.PRaw || syn.PValue != math.Max(syn.PRaw, 2*msm.PRaw) {
		t.Errorf("Holm: msm_h %g → %g, synthesis %g → %g", msm.PRaw, msm.PValue, syn.PRaw, syn.PValue)
	}
	// msm_h's +9.8% clears the 1% floor, and head's outlier run does not
	// hide it.
	if msm.Verdict != VerdictRegression || syn.Verdict != VerdictNoChange {
		t.Errorf("verdicts: msm_h %s, synthesis %s (%s)", msm.Verdict, syn.Verdict, syn.Reason)
	}
}

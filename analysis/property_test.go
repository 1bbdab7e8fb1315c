package analysis_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

// This file checks, over thousands of synthetic comparisons drawn from
// the distributions real runners produce (bimodal, small counts,
// zero-inflated, constant, drifting, shifted), that a report never says
// two things at once. It reads the reports as their readers do, through
// the three renderers (the Markdown tables, the text report, the JSON),
// so that it holds whatever the analysis computes internally.

// A world draws one run's value of one series: side 0 is base, 1 head;
// i of n is the run's place in its side's order.
type world struct {
	name string
	draw func(rng *rand.Rand, side, i, n int) float64
}

// timeWorlds draw positive times, as a phase's sec/op.
func timeWorlds(rng *rand.Rand) world {
	mu := math.Exp(rng.Float64()*6 - 7) // 0.9 ms … 0.4 s
	shift := []float64{0, 0, 0.01, -0.03, 0.05, 0.2}[rng.IntN(6)]
	sd := mu * []float64{0.001, 0.01, 0.05, 0.15}[rng.IntN(4)]
	at := func(side int) float64 { return mu * (1 + shift*float64(side)) }
	switch rng.IntN(5) {
	case 0:
		return world{"normal", func(rng *rand.Rand, side, _, _ int) float64 {
			return math.Abs(at(side) + sd*rng.NormFloat64())
		}}
	case 1:
		// Two modes, in proportions that differ by side: the medians
		// can jump between modes while most ratios stay near 1.
		gap := 1 + 0.05 + rng.Float64()*0.3
		pb, ph := rng.Float64(), rng.Float64()
		return world{"bimodal", func(rng *rand.Rand, side, _, _ int) float64 {
			p := pb
			if side == 1 {
				p = ph
			}
			v := at(side)
			if rng.Float64() < p {
				v *= gap
			}
			return math.Abs(v + sd*rng.NormFloat64())
		}}
	case 2:
		drift := (rng.Float64() - 0.5) * 1.2 // up to ±60% over a side's runs
		return world{"drifting", func(rng *rand.Rand, side, i, n int) float64 {
			return math.Abs(at(side)*(1+drift*float64(i)/float64(n)) + sd*rng.NormFloat64())
		}}
	case 3:
		c := math.Round(mu * 1e6)
		return world{"constant", func(_ *rand.Rand, side, _, _ int) float64 { return (c + 1) * (1 + shift*float64(side)) / 1e6 }}
	}
	// Heavy right tail: now and then a run three times as slow.
	return world{"tailed", func(rng *rand.Rand, side, _, _ int) float64 {
		v := at(side) + sd*math.Abs(rng.NormFloat64())
		if rng.Float64() < 0.1 {
			v *= 3
		}
		return v
	}}
}

// countWorlds draw counts: allocations, page faults, migrations.
func countWorlds(rng *rand.Rand) world {
	switch rng.IntN(5) {
	case 0: // constants, equal or not: 4 → 7 allocs/op
		b, h := float64(rng.IntN(8)), float64(rng.IntN(8))
		if rng.IntN(2) == 0 {
			h = b
		}
		return world{"constant count", func(_ *rand.Rand, side, _, _ int) float64 { return []float64{b, h}[side] }}
	case 1: // small Poisson counts
		lb, lh := rng.Float64()*8, rng.Float64()*8
		return world{"poisson", func(rng *rand.Rand, side, _, _ int) float64 { return poisson(rng, []float64{lb, lh}[side]) }}
	case 2: // mostly zero, now and then many (page faults of a run that grew its heap)
		zb, zh := 0.5+rng.Float64()/2, 0.5+rng.Float64()/2
		return world{"zero-inflated", func(rng *rand.Rand, side, _, _ int) float64 {
			if rng.Float64() < []float64{zb, zh}[side] {
				return 0
			}
			return math.Round(math.Exp(rng.Float64() * 7))
		}}
	case 3: // two values, in proportions that differ by side
		pb, ph := rng.Float64(), rng.Float64()
		return world{"two counts", func(rng *rand.Rand, side, _, _ int) float64 {
			if rng.Float64() < []float64{pb, ph}[side] {
				return 7
			}
			return 4
		}}
	}
	return world{"zeros", func(*rand.Rand, int, int, int) float64 { return 0 }}
}

func poisson(rng *rand.Rand, lambda float64) float64 {
	l, k, p := math.Exp(-lambda), 0.0, 1.0
	for {
		p *= rng.Float64()
		if p <= l {
			return k
		}
		k++
	}
}

// propertyComparison draws one comparison: three sec/op phases and their
// total, and three count units, over 4 to 40 runs a side.
func propertyComparison(t *testing.T, seed uint64) (analysis.Input, analysis.Options, []string) {
	rng := rand.New(rand.NewPCG(seed, 34))
	const bench = "Prove/circuit=sha256"
	phases := []string{"synthesis", "ntt", "msm_h"}
	var tw []world
	var names []string
	for range phases {
		w := timeWorlds(rng)
		tw = append(tw, w)
		names = append(names, w.name)
	}
	units := []string{"allocs/op", "page-faults/op", "cpu-migrations/op"}
	var cw []world
	for range units {
		w := countWorlds(rng)
		cw = append(cw, w)
		names = append(names, w.name)
	}
	n := [2]int{4 + rng.IntN(37), 0}
	n[1] = n[0]
	if rng.IntN(4) == 0 {
		n[1] = 4 + rng.IntN(37)
	}
	var in analysis.Input
	for side, rev := range []string{analysis.BaseRev, analysis.HeadRev} {
		for i := range n[side] {
			run := analysis.Run{Revision: rev, Status: analysis.StatusOK}
			total := 0.0
			for p, ph := range phases {
				v := tw[p].draw(rng, side, i, n[side])
				total += v
				run.Samples = append(run.Samples, analysis.Sample{analysis.Key{bench, ph, "sec/op"}, v})
			}
			run.Samples = append(run.Samples, analysis.Sample{analysis.Key{bench, "total", "sec/op"}, total})
			for u, unit := range units {
				run.Samples = append(run.Samples, analysis.Sample{analysis.Key{bench, "synthesis", unit}, cw[u].draw(rng, side, i, n[side])})
			}
			if side == 0 {
				in.Base = append(in.Base, run)
			} else {
				in.Head = append(in.Head, run)
			}
		}
	}
	opts := analysis.DefaultOptions()
	if rng.IntN(2) == 0 {
		opts.Alpha = 0.01
	}
	if rng.IntN(4) == 0 {
		in.Base, in.Head = randomProfiles(t, rng, in.Base, in.Head, phases)
		names = append(names, "profiles")
	}
	return in, opts, names
}

// randomProfiles gives every run a CPU profile of its phases: ten
// functions a phase, each side's sample counts drawn around the same
// shares, and now and then one function that grows in head.
func randomProfiles(t *testing.T, rng *rand.Rand, base, head []analysis.Run, phases []string) ([]analysis.Run, []analysis.Run) {
	grow := rng.IntN(2) == 0
	profiles := func(side int, n int) [][]byte {
		var out [][]byte
		for range n {
			var smp []analysis.FakeSample
			for _, ph := range phases {
				for f := range 10 {
					lambda := float64(1+f) * 0.6
					if grow && side == 1 && f == 0 {
						lambda *= 8
					}
					if k := int64(poisson(rng, lambda)); k > 0 {
						smp = append(smp, analysis.FakeSample{ph, []string{fmt.Sprintf("pkg.%s%d", ph, f), "main.main"}, k})
					}
				}
			}
			out = append(out, analysis.FakeProfile(t, smp...))
		}
		return out
	}
	return analysis.WithProfiles(base, "prove", profiles(0, len(base))...), analysis.WithProfiles(head, "prove", profiles(1, len(head))...)
}

var (
	mdRowRE   = regexp.MustCompile("^\\| `([^`]+)` \\| ([^|]+) → ([^|]+) \\| ([^|]+) \\|")
	leadNumRE = regexp.MustCompile(`^[+-]?[0-9]+(\.[0-9]+)?`)
	runsRE    = regexp.MustCompile(`about ([0-9,]+) runs a side`)
)

// leadNumber parses the number a formatted value starts with.
func leadNumber(s string) (float64, bool) {
	m := leadNumRE.FindString(strings.TrimSpace(strings.Trim(s, "* ")))
	if m == "" {
		return 0, false
	}
	v, err := strconv.ParseFloat(m, 64)
	return v, err == nil
}

// checkReport returns what is wrong with r as its renderings show it.
func checkReport(r *analysis.Report) []string {
	var bad []string
	var md, txt, js bytes.Buffer
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		return []string{err.Error()}
	}
	if err := render.RenderText(&txt, r); err != nil {
		return []string{err.Error()}
	}
	if err := render.RenderJSON(&js, r); err != nil {
		return []string{err.Error()}
	}
	// The sign of every Δ agrees with the two values shown beside it.
	for _, line := range strings.Split(md.String(), "\n") {
		m := mdRowRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		b, okB := leadNumber(m[2])
		h, okH := leadNumber(m[3])
		delta := strings.TrimSpace(strings.Trim(strings.TrimSpace(m[4]), "*"))
		d, okD := leadNumber(delta)
		if !okB || !okH || !okD {
			bad = append(bad, fmt.Sprintf("row %q: values or Δ not numbers", line))
			continue
		}
		switch {
		case h > b && d < 0, h < b && d > 0:
			bad = append(bad, fmt.Sprintf("row %q: Δ's sign disagrees with the values beside it", line))
		case h == b && math.Abs(d) >= 1 && strings.HasSuffix(strings.Fields(delta)[0], "%"):
			bad = append(bad, fmt.Sprintf("row %q: equal values beside a Δ of %s", line, delta))
		}
	}
	// Nothing infinite or undefined reaches a reader.
	for name, out := range map[string]string{"markdown": md.String(), "text": txt.String()} {
		for _, word := range []string{"NaN", "Inf", "∞", "n/a"} {
			if strings.Contains(out, word) {
				bad = append(bad, fmt.Sprintf("%s shows %q", name, word))
			}
		}
		for _, m := range runsRE.FindAllStringSubmatch(out, -1) {
			runs, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
			if runs > render.RunsBoundFactor*60 {
				bad = append(bad, fmt.Sprintf("%s suggests %s runs a side", name, m[1]))
			}
		}
	}
	var doc struct {
		Phases []struct {
			Phase        string                       `json:"phase"`
			Unit         string                       `json:"unit"`
			Better       string                       `json:"better"`
			Verdict      string                       `json:"verdict"`
			Shift        *float64                     `json:"shift_pct"`
			Lo           *float64                     `json:"delta_lo_pct"`
			Hi           *float64                     `json:"delta_hi_pct"`
			Abs          float64                      `json:"shift"`
			AbsLo        *float64                     `json:"shift_lo"`
			AbsHi        *float64                     `json:"shift_hi"`
			FloorPct     float64                      `json:"floor_pct"`
			Reason       string                       `json:"reason"`
			MDE          *float64                     `json:"mde_pct"`
			Primary      bool                         `json:"primary"`
			Distribution *analysis.DistributionChange `json:"distribution"`
			Headline     bool                         `json:"headline"`
		} `json:"phases"`
		Verdict     string `json:"verdict"`
		Attribution []struct {
			Phases []struct {
				Phase string   `json:"phase"`
				Share *float64 `json:"share_pct"`
			} `json:"phases"`
			Unexplained *float64 `json:"unexplained_share_pct"`
		} `json:"attribution"`
		ProfileDiffs []struct {
			Phase string `json:"phase"`
			Flat  []struct {
				Name        string   `json:"name"`
				HeadSamples int64    `json:"head_samples"`
				P           *float64 `json:"p_value"`
			} `json:"flat"`
			Cum []struct {
				Name        string   `json:"name"`
				HeadSamples int64    `json:"head_samples"`
				P           *float64 `json:"p_value"`
			} `json:"cum"`
		} `json:"profile_diffs"`
		Warnings []string `json:"warnings"`
	}
	if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
		return append(bad, "JSON: "+err.Error())
	}
	headlines := map[string]bool{}
	for _, row := range doc.Phases {
		name := row.Phase + " " + row.Unit
		if row.Headline {
			headlines[row.Verdict] = true
		}
		// The legend's one rule, applied to the interval the row shows,
		// gives the row's verdict: excludes 0 with Δ at the floor, a
		// change; within ±floor, no change; otherwise not settled. (A
		// row with too few runs was not tested and says so.)
		if want, ok := legendVerdict(row.Shift, row.Lo, row.Hi, row.Abs, row.AbsLo, row.AbsHi, row.FloorPct); ok &&
			row.Reason != analysis.ReasonTooFewRuns && row.Reason != analysis.ReasonRunsFailed && row.Verdict != string(analysis.VerdictWait) &&
			row.Reason != analysis.ReasonNonZero && row.Reason != analysis.ReasonModes {
			got := row.Verdict
			if got == string(analysis.VerdictImprovement) {
				got = string(analysis.VerdictRegression) // the rule says "a change"; its direction is checked below
			}
			if got != want {
				bad = append(bad, fmt.Sprintf("%s: %s beside Δ %v [%v, %v] (floor %.1f%%): the legend's rule gives %s", name, row.Verdict, ptr(row.Shift), ptr(row.Lo), ptr(row.Hi), row.FloorPct, want))
			}
		}
		// The MDE never claims a size unseeable that the row's own
		// interval already rules out.
		if row.Verdict == string(analysis.VerdictInconclusive) && row.MDE != nil && row.Lo != nil && row.Hi != nil {
			if far := math.Max(math.Abs(*row.Lo), math.Abs(*row.Hi)); *row.MDE > far+1e-9 {
				bad = append(bad, fmt.Sprintf("%s: MDE %.2f%% beyond its interval [%.2f, %.2f]", name, *row.MDE, *row.Lo, *row.Hi))
			}
		}
		// "No change" means the interval lies within ±floor.
		if row.Verdict == string(analysis.VerdictNoChange) && row.Lo != nil && row.Hi != nil && (*row.Lo < -row.FloorPct-1e-9 || *row.Hi > row.FloorPct+1e-9) {
			bad = append(bad, fmt.Sprintf("%s: no change with an interval [%.2f, %.2f] beyond its floor %.1f%%", name, *row.Lo, *row.Hi, row.FloorPct))
		}
		// A change of distribution is for the worse when more runs are
		// non-zero or the median rose (where lower is better).
		if d := row.Distribution; d != nil {
			w := d.HeadMedian > d.BaseMedian
			if d.Kind == analysis.ReasonNonZero {
				w = d.HeadNonZero*d.BaseN > d.BaseNonZero*d.HeadN
			}
			if row.Better == "higher" {
				w = !w
			}
			if w != (row.Verdict == string(analysis.VerdictRegression)) {
				bad = append(bad, fmt.Sprintf("%s: %s with %+v", name, row.Verdict, *d))
			}
			continue
		}
		// A regression is a change for the worse, by the same estimate.
		if row.Shift != nil && (row.Verdict == string(analysis.VerdictRegression) || row.Verdict == string(analysis.VerdictImprovement)) {
			worse := *row.Shift > 0
			if row.Better == "higher" {
				worse = !worse
			}
			if worse != (row.Verdict == string(analysis.VerdictRegression)) {
				bad = append(bad, fmt.Sprintf("%s: %s with Δ %+.2f%%", name, row.Verdict, *row.Shift))
			}
		}
	}
	// The report's verdict is its headline series': a phase that moved
	// while the headline did not never makes it a regression.
	switch {
	case headlines[string(analysis.VerdictRegression)]:
		if doc.Verdict != string(analysis.VerdictRegression) {
			bad = append(bad, fmt.Sprintf("verdict %s above a headline regression", doc.Verdict))
		}
	case doc.Verdict == string(analysis.VerdictRegression) || r.Fails():
		bad = append(bad, fmt.Sprintf("verdict %s (fails a check: %v) with no headline regression", doc.Verdict, r.Fails()))
	}
	// A headline that says nothing changed names what did, in other units.
	if flat := unwrapped(txt.String()); strings.Contains(flat, "series changed beyond its noise floor") && !strings.Contains(flat, "In other units") {
		for _, row := range r.Phases {
			if row.Changed() {
				bad = append(bad, fmt.Sprintf("the headline says nothing changed above %s %s, %s", row.Phase, row.Unit, row.Verdict))
				break
			}
		}
	}
	for _, a := range doc.Attribution {
		for _, p := range a.Phases {
			if p.Share != nil && (*p.Share < 0 || *p.Share > 100) {
				bad = append(bad, fmt.Sprintf("attribution: %s's share %.1f%%", p.Phase, *p.Share))
			}
		}
		if a.Unexplained != nil && (*a.Unexplained < 0 || *a.Unexplained > 100) {
			bad = append(bad, fmt.Sprintf("attribution: unexplained share %.1f%%", *a.Unexplained))
		}
	}
	// A function is listed only when its growth passes the test and
	// rests on enough samples.
	for _, d := range doc.ProfileDiffs {
		for _, f := range append(d.Flat, d.Cum...) {
			if f.P == nil || *f.P >= analysis.ProfileAlpha || f.HeadSamples < analysis.MinFuncSamples {
				bad = append(bad, fmt.Sprintf("%s's profile lists %s (%d head samples, p %v)", d.Phase, f.Name, f.HeadSamples, f.P))
			}
		}
	}
	if n := strings.Count(strings.Join(doc.Warnings, "\n"), "drifted"); n > 1 {
		bad = append(bad, fmt.Sprintf("%d drift warnings", n))
	}
	return bad
}

func TestReportsNeverContradictThemselves(t *testing.T) {
	t.Parallel()
	n := 3000
	if testing.Short() {
		n = 300
	}
	failed := 0
	for seed := range uint64(n) {
		in, opts, worlds := propertyComparison(t, seed)
		r := analysis.Compare(in, opts)
		if bad := checkReport(r); len(bad) > 0 {
			failed++
			if failed <= 5 {
				t.Errorf("comparison %d (%s): %s", seed, strings.Join(worlds, ", "), strings.Join(bad, "; "))
			}
		}
	}
	if failed > 0 {
		t.Errorf("%d of %d comparisons contradict themselves", failed, n)
	}
}

// legendVerdict applies the report legend's rule to a row's change and
// interval in percent (or, where the base's median is 0, in its unit):
// "regression" for any change, "no-change" or "inconclusive"; ok is false
// when the row shows no interval to apply it to.
func legendVerdict(pct, lo, hi *float64, abs float64, absLo, absHi *float64, floor float64) (string, bool) {
	if pct == nil {
		if absLo == nil || absHi == nil {
			return "", false
		}
		switch {
		case (*absLo > 0 || *absHi < 0) && abs != 0:
			return string(analysis.VerdictRegression), true
		case *absLo == 0 && *absHi == 0:
			return string(analysis.VerdictNoChange), true
		}
		return string(analysis.VerdictInconclusive), true
	}
	if lo == nil || hi == nil {
		return "", false
	}
	switch {
	case (*lo > 0 || *hi < 0) && math.Abs(*pct) >= floor:
		return string(analysis.VerdictRegression), true
	case *lo >= -floor && *hi <= floor:
		return string(analysis.VerdictNoChange), true
	}
	return string(analysis.VerdictInconclusive), true
}

// ptr formats a nullable number.
func ptr(v *float64) string {
	if v == nil {
		return "null"
	}
	return strconv.FormatFloat(*v, 'g', 6, 64)
}

package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"sync"
)

// This file is the group-sequential design of a comparison: a comparison
// looks at its runs after Count rounds and again after every batch of
// rounds it adds while unsettled, up to Max; each look tests at a nominal
// threshold stricter than α, taken from an α-spending function (Lan and
// DeMets), so that however many looks a comparison takes before it stops,
// the chance that any of them raises a false alarm stays at α. The
// thresholds come from the joint distribution of the test statistics at
// the looks (a Brownian motion in the information fraction), integrated
// numerically as Armitage, McPherson and Rowe did; see docs/statistics.md.

// The α-spending functions (Options.Spending).
const (
	// SpendingOBrienFleming is Lan and DeMets' O'Brien–Fleming-type
	// function, α/2 a side: α(t) = 4 − 4Φ(z(1−α/4)/√t). It spends almost nothing at
	// early looks and nearly α at the last, so a comparison that runs to
	// its cap loses little power, and only large changes stop it early.
	SpendingOBrienFleming = "obrien-fleming"
	// SpendingPocock is the Pocock-type function α(t) = α·ln(1 + (e−1)t):
	// nearly the same threshold at every look, so large changes stop a
	// comparison sooner, at the price of a stricter last look.
	SpendingPocock = "pocock"
)

// Spendings lists the spending functions, the default first.
var Spendings = []string{SpendingOBrienFleming, SpendingPocock}

// ErrUnknownSpending is wrapped by the error for a spending function that
// is not one of Spendings.
var ErrUnknownSpending = errors.New("unknown α-spending function")

// spent returns the cumulative α an α-spending function has spent at
// information fraction t in [0, 1].
func spent(spending string, alpha, t float64) float64 {
	switch {
	case t <= 0:
		return 0
	case t >= 1:
		return alpha
	}
	switch spending {
	case SpendingPocock:
		return alpha * math.Log(1+(math.E-1)*t)
	default:
		// Each side spends α/2 by 2 − 2Φ(z(1−α/4)/√t), as gsDesign's
		// sfLDOF and ldbounds define the two-sided symmetric boundary.
		return 4 * normalSurvival(NormalQuantile(1-alpha/4)/math.Sqrt(t))
	}
}

// A Design is the plan of a sequential comparison: the first look after
// Count runs a side, then a look after every Batch more, up to Max.
type Design struct {
	Count int `json:"count"`
	Batch int `json:"batch"`
	Max   int `json:"max"`
}

// NewDesign returns the design perfbot uses for count runs a side growing
// to at most maxRuns: batches of half the count, at least 2.
func NewDesign(count, maxRuns int) Design {
	count = max(count, 1)
	return Design{Count: count, Batch: max(2, count/2), Max: max(maxRuns, count)}
}

// Planned returns the runs a side at each planned look.
func (d Design) Planned() []int {
	looks := []int{d.Count}
	for n := d.Count; n < d.Max; {
		n = min(d.Max, n+max(d.Batch, 1))
		looks = append(looks, n)
	}
	return looks
}

// Run drives the design: measure(n) adds n rounds of runs, and judge
// looks at the runs so far, given the rounds a side at every look (this
// one last), and says whether the comparison is settled. Run measures
// Count rounds, then a Batch at a time while judge says it is not
// settled, up to Max rounds. It returns the looks taken, and the first
// error of measure or judge.
func (d Design) Run(measure func(n int) error, judge func(looks []int) (settled bool, err error)) ([]int, error) {
	var looks []int
	for n, total := d.Count, 0; n > 0; n = min(max(d.Batch, 1), d.Max-total) {
		if err := measure(n); err != nil {
			return looks, err
		}
		total += n
		looks = append(looks, total)
		settled, err := judge(looks)
		if err != nil || settled {
			return looks, err
		}
	}
	return looks, nil
}

// Looks says where a comparison stands in its sequential design: the
// runs a side at each look so far, this one last, and Max, the runs a
// side at the design's last look. The zero value is a comparison with a
// single look, a fixed design: it tests at α itself.
type Looks struct {
	Runs []int `json:"runs"`
	Max  int   `json:"max"`
}

// FixedLooks returns the Looks of a single look at n runs a side.
func FixedLooks(n int) Looks { return Looks{Runs: []int{n}, Max: n} }

// Final returns the fractions of the looks so far followed by the
// design's last (fraction 1), when this look is not already it: the
// looks whose thresholds the last look's depends on, for the runs a
// row would need by then.
func (l Looks) Final(minRuns int) []float64 {
	t := l.Fractions(minRuns)
	if t[len(t)-1] < 1 {
		t = append(t, 1)
	}
	return t
}

// Fractions returns the information fractions of the looks at which a
// test with minRuns runs a side could be made, in order: each look's runs
// over Max (capped at 1), leaving out looks with fewer than minRuns runs
// (no test happened there, so none spent α) and looks that added nothing
// (the same data tested again). The zero Looks is one look at fraction 1.
func (l Looks) Fractions(minRuns int) []float64 {
	maxRuns := l.Max
	if len(l.Runs) > 0 {
		maxRuns = max(maxRuns, l.Runs[len(l.Runs)-1])
	}
	var t []float64
	for _, n := range l.Runs {
		if n < minRuns || maxRuns <= 0 {
			continue
		}
		f := math.Min(1, float64(n)/float64(maxRuns))
		if len(t) > 0 && f <= t[len(t)-1] {
			continue
		}
		t = append(t, f)
	}
	if len(t) == 0 {
		t = []float64{1}
	}
	return t
}

// A SequentialLook is one look of a comparison as its report describes
// it.
type SequentialLook struct {
	// Runs is the runs a side at the look.
	Runs int `json:"runs"`
	// Fraction is Runs over the design's Max (the information fraction).
	Fraction float64 `json:"fraction"`
	// Spent is the α spent up to and including this look, for one test
	// at the report's α.
	Spent float64 `json:"alpha_spent"`
	// Threshold is the nominal p-value a single test had to fall below
	// at this look for the looks together to keep α. A family of m tests
	// (Holm) uses the thresholds of α/m, α/(m−1), …: see Row.Threshold.
	Threshold float64 `json:"threshold"`
}

// A SequentialDesign describes how a report's looks kept α.
type SequentialDesign struct {
	// Spending names the α-spending function (Spendings).
	Spending string `json:"spending"`
	// MaxRuns is the runs a side at the design's last look.
	MaxRuns int `json:"max_runs"`
	// Looks are the looks taken, this report's last; a look with fewer
	// runs than a test needs is left out.
	Looks []SequentialLook `json:"looks"`
}

// NewSequentialDesign describes looks for a report at alpha.
func NewSequentialDesign(spending string, alpha float64, looks Looks, minRuns int) SequentialDesign {
	t := looks.Fractions(minRuns)
	th := Thresholds(spending, alpha, t)
	maxRuns := looks.Max
	if len(looks.Runs) > 0 {
		maxRuns = max(maxRuns, looks.Runs[len(looks.Runs)-1])
	}
	d := SequentialDesign{Spending: spending, MaxRuns: maxRuns, Looks: make([]SequentialLook, len(t))}
	for i, f := range t {
		d.Looks[i] = SequentialLook{Runs: int(math.Round(f * float64(maxRuns))), Fraction: f, Spent: spent(spending, alpha, f), Threshold: th[i]}
	}
	return d
}

// A walkKey names the boundary walks of one spending function and level.
type walkKey struct {
	spending string
	alpha    float64
}

// walks holds, per spending function and level, the boundary walks
// computed so far. A comparison asks for the thresholds of looks 1…k at
// its k-th look, and those of looks 1…k−1 are the same as at its last
// look: a walk that has taken them carries on by one look instead of
// starting again (at 60 runs a side, eleven looks: 11 look steps, not 66).
var (
	walksMu sync.Mutex
	walks   = map[walkKey][]*boundaryWalk{}
)

// Thresholds returns the nominal two-sided p-value thresholds, one per
// look at information fractions t (increasing, the last at most 1), that
// an α-spending function gives for overall level alpha: a test whose
// statistic crosses any look's threshold is a rejection, and under the
// null hypothesis the chance of any crossing is alpha at t = 1 (less when
// the design stopped short of it). Look 1 spends α(t₁); look k spends
// α(t_k) − α(t_{k−1}), given that no earlier look crossed. The boundaries
// are kept (walks), so each look's is computed once per process.
func Thresholds(spending string, alpha float64, t []float64) []float64 {
	zs := walkBoundaries(spending, alpha, t)
	ps := make([]float64, len(zs))
	for i, z := range zs {
		ps[i] = 2 * normalSurvival(z)
	}
	// The first look's threshold is what it spends, exactly: a one-look
	// design tests at α itself, with no round trip through a quantile.
	if len(ps) > 0 {
		ps[0] = spent(spending, alpha, t[0])
	}
	return ps
}

// walkBoundaries returns the Z boundaries of looks at t, from a kept
// walk whose looks t begins with (carried on to t's further looks), or
// from a new one.
func walkBoundaries(spending string, alpha float64, t []float64) []float64 {
	walksMu.Lock()
	defer walksMu.Unlock()
	key := walkKey{spending, alpha}
	var w *boundaryWalk
	for _, kept := range walks[key] {
		n := min(len(kept.t), len(t))
		if slices.Equal(kept.t[:n], t[:n]) {
			w = kept
			break
		}
	}
	if w == nil {
		w = &boundaryWalk{alpha: func(f float64) float64 { return spent(spending, alpha, f) }}
		walks[key] = append(walks[key], w)
	}
	for k := len(w.t); k < len(t); k++ {
		w.next(t[k])
	}
	return slices.Clone(w.c[:len(t)])
}

// boundaryStep is the grid step, on the Z scale, of the numerical
// integration: 0.02 keeps the computed crossing probabilities within
// 1e-6 of α (TestBoundariesSpendAlpha checks them by simulation).
const boundaryStep = 0.02

// boundaryTail bounds the grid where a look put no boundary: beyond
// ±8.5 standard deviations lies less than 1e-16 of the density.
const boundaryTail = 8.5

// boundaries returns the two-sided Z boundaries c₁ … c_K for looks at
// information fractions t, given the cumulative spending function alpha:
// P(|Z₁| ≥ c₁) = alpha(t₁), and P(|Z_k| ≥ c_k, |Z_j| < c_j for j < k) =
// alpha(t_k) − alpha(t_{k−1}), where Z_k is the standardized statistic at
// look k: Z_k·√t_k is a Brownian motion at time t_k. The density of
// Z_{k−1} on its continuation region is carried from look to look on a
// grid (Simpson's rule), as in Jennison and Turnbull's chapter 19. A look
// that spends nothing gets an infinite boundary (threshold 0).
func boundaries(alpha func(t float64) float64, t []float64) []float64 {
	w := &boundaryWalk{alpha: alpha}
	for _, tk := range t {
		w.next(tk)
	}
	return w.c
}

// A boundaryWalk is boundaries taken one look at a time: after the looks
// at t it holds their boundaries c and what the next look needs.
type boundaryWalk struct {
	alpha func(t float64) float64
	t, c  []float64
	// z, g, w are the continuation density of the last look but one
	// (values g at points z, Simpson weights w with the grid spacing
	// folded in), carried to the last look by next when it is needed.
	z, g, w          []float64
	prevSpent, prevT float64
	// carry says the density is still the look before the last's.
	carry bool
}

// next adds the look at fraction tk (above the last).
func (b *boundaryWalk) next(tk float64) {
	k := len(b.t)
	if b.carry {
		b.carryDensity()
	}
	b.t = append(b.t, tk)
	inc := b.alpha(tk) - b.prevSpent
	if k == 0 {
		c := math.Inf(1)
		if inc > 0 {
			c = NormalQuantile(1 - inc/2)
		}
		b.c = append(b.c, c)
		b.z, b.w = simpsonGrid(math.Min(c, boundaryTail))
		b.g = make([]float64, len(b.z))
		for i, x := range b.z {
			b.g[i] = normalDensity(x)
		}
	} else {
		z, g, w := b.z, b.g, b.w
		sPrev, sk, sd := math.Sqrt(b.prevT), math.Sqrt(tk), math.Sqrt(tk-b.prevT)
		// cross(c) is P(|Z_k| ≥ c, no earlier crossing).
		cross := func(c float64) float64 {
			sum := 0.0
			for i, u := range z {
				m := u * sPrev
				sum += w[i] * g[i] * (normalSurvival((c*sk-m)/sd) + normalCDF((-c*sk-m)/sd))
			}
			return sum
		}
		c := math.Inf(1)
		if inc > 0 {
			// cross decreases in c; bisect for cross(c) = inc.
			lo, hi := 0.0, 2*boundaryTail
			if cross(lo) <= inc {
				hi = 0 // spending more than is left: reject everything
			}
			for range 80 {
				if hi-lo < 1e-10 {
					break
				}
				mid := (lo + hi) / 2
				if cross(mid) > inc {
					lo = mid
				} else {
					hi = mid
				}
			}
			c = hi
		}
		b.c = append(b.c, c)
		b.carry = true
	}
	b.prevSpent = math.Max(b.prevSpent, b.alpha(tk))
	if !b.carry {
		b.prevT = tk
	}
}

// carryDensity carries the continuation density from the look before the
// last to the last, whose boundary it cuts at.
func (b *boundaryWalk) carryDensity() {
	k := len(b.t) - 1
	tk, c := b.t[k], b.c[k]
	sPrev, sk, sd := math.Sqrt(b.prevT), math.Sqrt(tk), math.Sqrt(tk-b.prevT)
	nz, nw := simpsonGrid(math.Min(c, boundaryTail))
	ng := make([]float64, len(nz))
	scale := sk / sd
	for j, x := range nz {
		sum := 0.0
		for i, u := range b.z {
			sum += b.w[i] * b.g[i] * normalDensity((x*sk-u*sPrev)/sd)
		}
		ng[j] = sum * scale
	}
	b.z, b.g, b.w = nz, ng, nw
	b.prevT, b.carry = tk, false
}

// simpsonGrid returns points spanning [−b, b] at about boundaryStep apart
// (an even number of intervals) and their Simpson's-rule weights.
func simpsonGrid(b float64) (z, w []float64) {
	n := int(math.Ceil(2 * b / boundaryStep))
	if n < 2 {
		n = 2
	}
	if n%2 == 1 {
		n++
	}
	h := 2 * b / float64(n)
	z, w = make([]float64, n+1), make([]float64, n+1)
	for i := range z {
		z[i] = -b + float64(i)*h
		switch {
		case i == 0 || i == n:
			w[i] = h / 3
		case i%2 == 1:
			w[i] = 4 * h / 3
		default:
			w[i] = 2 * h / 3
		}
	}
	return z, w
}

func normalDensity(x float64) float64 { return math.Exp(-x*x/2) / math.Sqrt(2*math.Pi) }

func normalCDF(x float64) float64 { return 0.5 * math.Erfc(-x/math.Sqrt2) }

func normalSurvival(x float64) float64 { return 0.5 * math.Erfc(x/math.Sqrt2) }

// StepDown applies Holm's step-down procedure to one family's raw
// p-values at one look of a sequential design: with the m p-values
// sorted ascending, the i-th (from 0) is compared with the look's
// threshold for overall level α/(m−i), and rejection stops at the first
// that is not below its threshold. Each test's threshold is the
// threshold of its place in that order. This is the closed testing
// procedure of Bonferroni-weighted group-sequential tests (Maurer and
// Bretz 2013): every intersection of hypotheses is tested at α by
// group-sequential tests at α/|J| each, so the chance of any false
// rejection at any look stays at α. It returns each test's threshold and
// its adjusted p-value: the largest, over the steps up to and including
// its own, of p·α/threshold (capped at 1), so that a test is rejected
// exactly when its adjusted p-value is below α. In a one-look design the
// thresholds are α/(m−i) and the adjusted p-values are Holm's.
func StepDown(p []float64, alpha float64, spending string, t []float64) (threshold, adjusted []float64) {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return CmpFloat(p[a], p[b]) })
	threshold, adjusted = make([]float64, m), make([]float64, m)
	running := 0.0
	for k, i := range order {
		th := Thresholds(spending, alpha/float64(m-k), t)
		threshold[i] = th[len(th)-1]
		v := 1.0
		if threshold[i] > 0 {
			v = math.Min(1, p[i]*alpha/threshold[i])
		}
		running = math.Max(running, v)
		adjusted[i] = running
	}
	return threshold, adjusted
}

func CmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ValidSpending returns an error wrapping ErrUnknownSpending unless s is
// one of Spendings.
func ValidSpending(s string) error {
	if slices.Contains(Spendings, s) {
		return nil
	}
	return fmt.Errorf("%w %q: use %s", ErrUnknownSpending, s, strings.Join(Spendings, " or "))
}

package analysis

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

func TestZZSettle(t *testing.T) {
	for _, noise := range []float64{0.003, 0.01, 0.03} {
		w := simWorld{name: "quiet",
			machine: func(rng *rand.Rand, _ int) float64 { return math.Exp(0.002 * rng.NormFloat64()) },
			draw: func(rng *rand.Rand, p int, m float64, _ int) float64 {
				return provePhases[p].sec * m * math.Exp(noise*rng.NormFloat64())
			}}
		d := NewDesign(10, 60)
		opts := DefaultOptions()
		opts.Alpha = 0.01
		for _, shift := range []float64{1, 1.05} {
			out := simulateMany(7, 200, w, 6, shift, d, opts)
			var r []int
			nc := 0
			for _, o := range out {
				r = append(r, o.rounds)
				if o.verdict == VerdictNoChange || o.verdict == VerdictRegression {
					nc++
				}
			}
			sort.Ints(r)
			t.Logf("noise %.3f shift %.2f: settled %d/200, median rounds %d, p90 %d", noise, shift, nc, r[100], r[180])
		}
	}
}

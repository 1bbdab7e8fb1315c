package analysis

import (
	"math"
	"math/rand/v2"
)

// PairedRuns makes rounds of one base and one head run of two phases on
// a machine that drifts round to round (AR(1), 3% a step, lag-1
// correlation 0.7), shared by both runs of a round; head's solve is
// shift slower.
func PairedRuns(seed uint64, rounds int, shift float64) (base, head []Run) {
	rng := rand.New(rand.NewPCG(seed, 1))
	m := 0.0
	for r := 1; r <= rounds; r++ {
		m = 0.7*m + 0.03*rng.NormFloat64()
		one := func(rev string, f float64) Run {
			parse := 0.020 * math.Exp(m+0.003*rng.NormFloat64())
			solve := 0.040 * f * math.Exp(m+0.003*rng.NormFloat64())
			return Run{Revision: rev, Status: StatusOK, Round: r, Samples: []Sample{
				{Key{"Work", "parse", "sec/op"}, parse},
				{Key{"Work", "solve", "sec/op"}, solve},
				{Key{"Work", "total", "sec/op"}, parse + solve},
			}}
		}
		base = append(base, one(BaseRev, 1))
		head = append(head, one(HeadRev, 1+shift))
	}
	return base, head
}

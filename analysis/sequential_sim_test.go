package analysis

import (
	"math"
	"math/rand/v2"
	"os"
	"sort"
	"sync"
	"testing"

	"github.com/perfbot/perfbot/analysis/stats"
)

// This file checks the sequential comparison by simulation: thousands of
// synthetic comparisons of the prover's ten primary series (nine phases
// and total), through Design.Run and Compare exactly as the runner drives
// them (10 runs a side, batches while unsettled, up to the cap; the sides
// in a random order within each round), drawn from skewed, heavy-tailed
// and drifting distributions. With no change planted, the share of
// comparisons that end in a regression or an improvement is the
// family-wise false-alarm rate, which must not exceed α at the shipped
// defaults (α 0.01, cap 60); with a shift planted in one phase at the
// minimum detectable change its A/A runs predict, that phase must be
// found about half the time. Testing every look at α itself (the old
// loop) raises the rate to about 0.14 at α 0.05 and cap 30 (the control
// test below).

// A simWorld draws the values of one run.
type simWorld struct {
	name string
	// draw returns phase p's value in the run-th run of the comparison
	// (counting both sides), before any planted shift: nominal seconds
	// times the machine's state of that run (common to every phase)
	// times the phase's own noise.
	draw func(rng *rand.Rand, p int, machine float64, run int) float64
	// machine returns the run's common factor.
	machine func(rng *rand.Rand, run int) float64
}

// simNoise is each phase's own relative noise: short phases vary more,
// as on the 2-core machine (REFERENCE.md: 6–8% for 40–120 ms phases).
var simNoise = []float64{0.02, 0.05, 0.04, 0.04, 0.03, 0.03, 0.03, 0.05, 0.06}

var simWorlds = []simWorld{
	{
		// Skewed: lognormal, a 2% machine factor and each phase's noise.
		name:    "lognormal",
		machine: func(rng *rand.Rand, _ int) float64 { return math.Exp(0.02 * rng.NormFloat64()) },
		draw: func(rng *rand.Rand, p int, m float64, _ int) float64 {
			return ProvePhases[p].sec * m * math.Exp(simNoise[p]*rng.NormFloat64())
		},
	},
	{
		// Heavy-tailed: one run in eight is slowed by an exponential
		// amount averaging 15% (another job, a page-cache miss), on top of
		// Student's t noise with 3 degrees of freedom.
		name: "heavy-tailed",
		machine: func(rng *rand.Rand, _ int) float64 {
			if rng.Float64() < 0.125 {
				return 1 + 0.15*rng.ExpFloat64()
			}
			return 1
		},
		draw: func(rng *rand.Rand, p int, m float64, _ int) float64 {
			return ProvePhases[p].sec * m * (1 + simNoise[p]*studentT3(rng)/math.Sqrt(3))
		},
	},
	{
		// Drifting: the machine slows by 6% over the comparison's 60 runs
		// and cycles ±2% with a period of 7 runs (a neighbour's job),
		// both sides alike, on lognormal noise.
		name: "drifting",
		machine: func(rng *rand.Rand, run int) float64 {
			return (1 + 0.001*float64(run)) * (1 + 0.02*math.Sin(2*math.Pi*float64(run)/7)) * math.Exp(0.01*rng.NormFloat64())
		},
		draw: func(rng *rand.Rand, p int, m float64, _ int) float64 {
			return ProvePhases[p].sec * m * math.Exp(simNoise[p]*rng.NormFloat64())
		},
	},
}

// studentT3 draws Student's t with 3 degrees of freedom (variance 3).
func studentT3(rng *rand.Rand) float64 {
	z := rng.NormFloat64()
	chi := 0.0
	for range 3 {
		x := rng.NormFloat64()
		chi += x * x
	}
	return z / math.Sqrt(chi/3)
}

// simOutcome is what one simulated comparison ended with.
type simOutcome struct {
	verdict Verdict
	// anyChange says a primary series, headline or not, was judged a
	// regression or an improvement: the family-wise false alarm the
	// design bounds (the verdict alone is the headline's).
	anyChange bool
	msmH      Row // the planted phase's row
	rounds    int
}

// simulate runs one comparison in world w with head's phase planted
// slowed by shift (a factor, 1 for none), judged with opts.
func simulate(rng *rand.Rand, w simWorld, planted int, shift float64, d stats.Design, opts Options) simOutcome {
	var base, head []Run
	run := 0
	oneRun := func(rev string, factor float64) Run {
		m := w.machine(rng, run)
		r := Run{Revision: rev, Status: StatusOK}
		total := proveOverhead
		for p := range ProvePhases {
			v := w.draw(rng, p, m, run)
			if p == planted {
				v *= factor
			}
			if p != 7 { // msm_h/step=sort is inside msm_h
				total += v
			}
			r.Samples = append(r.Samples, Sample{Key{ProveBench, ProvePhases[p].name, "sec/op"}, v})
		}
		r.Samples = append(r.Samples, Sample{Key{ProveBench, "total", "sec/op"}, total})
		run++
		return r
	}
	round := 0
	measure := func(n int) error {
		for range n {
			round++
			// A random order within the round, as order: random.
			if rng.IntN(2) == 0 {
				base = append(base, oneRun(BaseRev, 1))
				head = append(head, oneRun(HeadRev, shift))
			} else {
				head = append(head, oneRun(HeadRev, shift))
				base = append(base, oneRun(BaseRev, 1))
			}
			base[len(base)-1].Round, head[len(head)-1].Round = round, round
		}
		return nil
	}
	var rep *Report
	looks, _ := d.Run(measure, func(looks []int) (bool, error) {
		rep = Compare(Input{BaseRev: BaseRev, HeadRev: HeadRev, Base: base, Head: head, Looks: stats.Looks{Runs: looks, Max: d.Max}}, opts)
		return !rep.NeedMoreRuns(), nil
	})
	out := simOutcome{verdict: rep.Verdict, anyChange: anyPrimaryChange(rep), rounds: looks[len(looks)-1]}
	if row := Find(rep, ProvePhases[planted].name); row != nil {
		out.msmH = *row
	}
	return out
}

// simulateMany runs n comparisons on both CPUs and returns their
// outcomes in a fixed order (each comparison has its own seeded source).
func simulateMany(seed uint64, n int, w simWorld, planted int, shift float64, d stats.Design, opts Options) []simOutcome {
	out := make([]simOutcome, n)
	var wg sync.WaitGroup
	workers := 4
	for k := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := k; i < n; i += workers {
				rng := rand.New(rand.NewPCG(seed, uint64(i)))
				out[i] = simulate(rng, w, planted, shift, d, opts)
			}
		}()
	}
	wg.Wait()
	return out
}

// simTally counts what a batch of simulated comparisons ended in.
type simTally struct {
	alarms int   // comparisons with a regression or improvement in any primary series
	found  int   // msm_h judged a regression
	wrong  int   // msm_h judged an improvement
	rounds []int // rounds each comparison used, sorted
}

func tallyOutcomes(out []simOutcome) simTally {
	t := simTally{rounds: make([]int, 0, len(out))}
	for _, o := range out {
		if o.anyChange {
			t.alarms++
		}
		switch o.msmH.Verdict {
		case VerdictRegression:
			t.found++
		case VerdictImprovement:
			t.wrong++
		}
		t.rounds = append(t.rounds, o.rounds)
	}
	sort.Ints(t.rounds)
	return t
}

// simShippedAlpha and simShippedCap are the shipped defaults: a
// .perfbot.yml's thresholds.alpha and max_count when it says nothing
// (runner/testdata/perfbot.example.yml documents them).
const (
	simShippedAlpha = 0.01
	simShippedCap   = 60
)

// simComparisons is how many A/A comparisons each world gets in make
// test; PERFBOT_SIM_FULL=1 gives each simComparisonsFull (BENCHMARKS.md
// has that run's figures: it takes minutes).
const (
	simComparisons     = 400
	simComparisonsFull = 2000
)

// TestSequentialAAFalseAlarmRateAtTheShippedDefaults runs A/A
// comparisons at the shipped α and cap, through Design.Run and Compare as
// the runner drives them, in every world, and fails when the false
// alarms are more than a one-sided binomial test at level 0.8% allows
// for a true family-wise rate of α: k > nα + 2.4·√(nα(1−α)). At the full
// size (6,000 comparisons) a true rate of 1.5α fails it 89 times in 100;
// at make test's 1,200, a rate of 2α fails it 79 times in 100.
func TestSequentialAAFalseAlarmRateAtTheShippedDefaults(t *testing.T) {
	checkAAFalseAlarmRate(t, false, simComparisons, 100)
}

// simPairedComparisons is how many A/A comparisons each world gets in the
// paired analysis's simulation in make test (PERFBOT_SIM_FULL=1: 2,000).
const simPairedComparisons = 150

// TestPairedAAFalseAlarmRateAtTheShippedDefaults is the same simulation
// with Options.Paired: the rounds' log ratios, Wilcoxon's signed-rank
// test, the same looks and Holm family, the same limit.
func TestPairedAAFalseAlarmRateAtTheShippedDefaults(t *testing.T) {
	checkAAFalseAlarmRate(t, true, simPairedComparisons, 400)
}

// checkAAFalseAlarmRate simulates per A/A comparisons in every world
// (simComparisonsFull with PERFBOT_SIM_FULL=1) at the shipped defaults,
// paired or not, seeded from seed, and fails above the limit the tests
// above describe.
func checkAAFalseAlarmRate(t *testing.T, paired bool, per int, seed uint64) {
	if os.Getenv("PERFBOT_SIM_FULL") == "1" {
		per = simComparisonsFull
	} else if testing.Short() {
		t.Skip("-short: the simulation takes a minute")
	}
	label := "unpaired"
	if paired {
		label = "paired"
	}
	d := stats.NewDesign(10, simShippedCap)
	opts := DefaultOptions()
	opts.Alpha, opts.Paired = simShippedAlpha, paired
	total, alarms := 0, 0
	for wi, w := range simWorlds {
		out := simulateMany(seed+uint64(wi), per, w, 6, 1, d, opts)
		if out[0].msmH.Paired != paired {
			t.Fatalf("%s: rows paired %v, want %v", w.name, out[0].msmH.Paired, paired)
		}
		tl := tallyOutcomes(out)
		lo, hi := stats.ClopperPearson(tl.alarms, len(out), 0.95)
		t.Logf("%s (%s): %d of %d A/A comparisons raised a false alarm (%.2f%%, 95%% CI %.2f–%.2f%%); median rounds %d",
			w.name, label, tl.alarms, len(out), 100*float64(tl.alarms)/float64(len(out)), 100*lo, 100*hi, tl.rounds[len(tl.rounds)/2])
		total += len(out)
		alarms += tl.alarms
	}
	n, a := float64(total), opts.Alpha
	limit := n*a + 2.4*math.Sqrt(n*a*(1-a))
	lo, hi := stats.ClopperPearson(alarms, total, 0.95)
	t.Logf("all worlds (%s): %d of %d (%.2f%%, 95%% CI %.2f–%.2f%%) at α = %v, cap %d; the most a rate of α allows here: %.1f",
		label, alarms, total, 100*float64(alarms)/n, 100*lo, 100*hi, a, simShippedCap, limit)
	if float64(alarms) > limit {
		t.Errorf("%s: %d false alarms in %d A/A comparisons at α = %v: more than the %.1f a family-wise rate of α allows (one-sided, level 0.8%%)",
			label, alarms, total, a, limit)
	}
}

// TestEveryLookAtAlphaWouldInflateFalseAlarms is the control: the same
// comparisons with every look tested at α itself (each look judged as a
// one-look comparison, the old loop) raise false alarms well above α,
// which is what the sequential thresholds prevent.
func TestEveryLookAtAlphaWouldInflateFalseAlarms(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: the control simulation takes seconds")
	}
	d := stats.NewDesign(10, 30)
	w := simWorlds[0]
	naive := 0
	const n = 600
	for i := range n {
		rng := rand.New(rand.NewPCG(7, uint64(i)))
		var base, head []Run
		g := &synth{rng: rng, noise: 0.04}
		alarm := false
		_, _ = d.Run(func(k int) error {
			base = append(base, g.Runs(BaseRev, k, nil)...)
			head = append(head, g.Runs(HeadRev, k, nil)...)
			return nil
		}, func(looks []int) (bool, error) {
			rep := Compare(Input{Base: base, Head: head}, DefaultOptions()) // one look, at α
			alarm = anyPrimaryChange(rep)
			return alarm || !rep.NeedMoreRuns(), nil
		})
		if alarm {
			naive++
		}
	}
	rate := float64(naive) / n
	t.Logf("%s world, every look at α: %d of %d A/A comparisons alarmed (%.1f%%)", w.name, naive, n, 100*rate)
	if rate < 0.07 {
		t.Errorf("every look at α alarmed in only %.3f of A/A comparisons: the control no longer shows the inflation the sequential thresholds prevent", rate)
	}
}

// TestSequentialPowerMatchesMDE plants a shift in msm_h of the minimum
// detectable change that A/A comparisons of the same world report at
// their last look (half the width of the interval that decides there),
// and checks that the sequential comparison finds it about half the
// time: a change of exactly that size puts the centre of its interval
// one half width from 0, so its lower edge falls on either side of 0
// equally often. The looks before the last add a little; the tolerance
// covers that and the sampling of 600 comparisons. The floor is set low
// so that the MDE is the noise's alone.
func TestSequentialPowerMatchesMDE(t *testing.T) {
	d := stats.NewDesign(10, 30)
	opts := DefaultOptions()
	opts.MinChangePct = 0.01
	const planted = 6 // msm_h
	for wi, w := range simWorlds[:2] {
		aa := simulateMany(uint64(200+wi), 300, w, planted, 1, d, opts)
		var mdes []float64
		for _, o := range aa {
			if o.rounds == d.Max && stats.Finite(o.msmH.MDEPct) {
				mdes = append(mdes, o.msmH.MDEPct)
			}
		}
		if len(mdes) < 100 {
			t.Fatalf("%s: only %d A/A comparisons reached the last look with an MDE", w.name, len(mdes))
		}
		sort.Float64s(mdes)
		mde := mdes[len(mdes)/2]
		out := simulateMany(uint64(300+wi), 600, w, planted, 1+mde/100, d, opts)
		tl := tallyOutcomes(out)
		found, wrong, rounds := tl.found, tl.wrong, tl.rounds
		power := float64(found) / float64(len(out))
		t.Logf("%s: MDE of msm_h at 30 runs %.2f%%; planted that, found %d of %d (power %.1f%%), wrong direction %d, median rounds %d",
			w.name, mde, found, len(out), 100*power, wrong, rounds[len(rounds)/2])
		if power < 0.40 || power > 0.62 || wrong > 0 {
			t.Errorf("%s: planted the MDE %.2f%%, power %.3f (want about 0.5: 0.40 to 0.62) and %d wrong-direction verdicts", w.name, mde, power, wrong)
		}
	}
}

// anyPrimaryChange reports whether any primary series of rep, headline or
// not, was judged a regression or an improvement.
func anyPrimaryChange(rep *Report) bool {
	for _, row := range rep.Phases {
		if row.Primary && (row.Verdict == VerdictRegression || row.Verdict == VerdictImprovement) {
			return true
		}
	}
	return false
}

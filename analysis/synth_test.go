package analysis

import (
	"math/rand/v2"
	"strings"
)

// This file builds synthetic runs of the prover's benchmark for the tests:
// every phase's time is its nominal time, times a per-side factor, times
// seeded noise, and total is the sum of the top-level phases plus a fixed
// overhead.

const (
	ProveBench = "Prove/circuit=sha256/constraints=65536/backend=cpu"
	BaseRev    = "1111111111111111111111111111111111111111"
	HeadRev    = "2222222222222222222222222222222222222222"
)

// ProvePhases are the phases the prover prints, in its order, with their
// nominal seconds. The sort step is inside msm_h.
var ProvePhases = []struct {
	name string
	sec  float64
}{
	{"synthesis", 0.812},
	{"ntt", 0.120},
	{"msm_a", 0.210},
	{"msm_b1", 0.190},
	{"msm_b2", 0.380},
	{"msm_l", 0.300},
	{"msm_h", 0.400},
	{"msm_h/step=sort", 0.150},
	{"assemble", 0.030},
}

// proveOverhead is the time of total outside every phase.
const proveOverhead = 0.004

// A synth generates runs.
type synth struct {
	rng *rand.Rand
	// noise is the relative standard deviation of every value.
	noise float64
	// Uniform draws noise uniformly in ±noise·√3 (the same standard
	// deviation) instead of normally; the golden tests use it because
	// its arithmetic is simpler to keep stable.
	Uniform bool
	// Instructions adds an instructions/op counter to synthesis and
	// msm_h.
	Instructions bool
}

func NewSynth(seed uint64, noise float64) *synth {
	return &synth{rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), noise: noise}
}

func (g *synth) jitter() float64 {
	if g.Uniform {
		return 1 + g.noise*1.7320508075688772*(2*g.rng.Float64()-1)
	}
	return 1 + g.noise*g.rng.NormFloat64()
}

// Runs returns n ok runs of rev; factor multiplies the phases it names
// (total follows from the phases).
func (g *synth) Runs(rev string, n int, factor map[string]float64) []Run {
	runs := make([]Run, n)
	for i := range runs {
		runs[i] = g.run(rev, factor)
	}
	return runs
}

func (g *synth) run(rev string, factor map[string]float64) Run {
	run := Run{Revision: rev, Status: StatusOK}
	total := proveOverhead
	for _, p := range ProvePhases {
		f := factor[p.name]
		if f == 0 {
			f = 1
		}
		v := p.sec * f * g.jitter()
		if !strings.Contains(p.name, "/") {
			total += v
		}
		run.Samples = append(run.Samples, Sample{Key{ProveBench, p.name, "sec/op"}, v})
		if g.Instructions && (p.name == "synthesis" || p.name == "msm_h") {
			ins := p.sec * 4e9 * f * g.jitter()
			run.Samples = append(run.Samples, Sample{Key{ProveBench, p.name, "instructions/op"}, ins})
		}
	}
	run.Samples = append(run.Samples, Sample{Key{ProveBench, "total", "sec/op"}, total})
	return run
}

// failed returns n runs of rev that ended with status.
func failed(rev string, n int, status Status, detail string) []Run {
	runs := make([]Run, n)
	for i := range runs {
		runs[i] = Run{Revision: rev, Status: status, Detail: detail}
	}
	return runs
}

// Find returns the row of a phase in sec/op, or nil.
func Find(r *Report, phase string) *Row {
	return FindUnit(r, phase, "sec/op")
}

func FindUnit(r *Report, phase, unit string) *Row {
	for i := range r.Phases {
		if r.Phases[i].Phase == phase && r.Phases[i].Unit == unit {
			return &r.Phases[i]
		}
	}
	return nil
}

// HasWarning reports whether some warning contains every one of parts.
func HasWarning(r *Report, parts ...string) bool {
	for _, w := range r.Warnings {
		all := true
		for _, p := range parts {
			if !strings.Contains(w, p) {
				all = false
			}
		}
		if all {
			return true
		}
	}
	return false
}

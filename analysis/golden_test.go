package analysis

// This file holds the fixed comparison the golden files render, shared
// with the external tests (package analysis_test) that render it.

// GoldenInput is a fixed comparison that exercises every part of a
// rendering: a regression in msm_h (time and instructions), failed head
// runs, learned and minimum floors, a series only head measured, and a
// GPU driver that differs.
func GoldenInput() Input {
	g := NewSynth(42, 0.004)
	g.Uniform = true
	g.Instructions = true
	base := g.Runs(BaseRev, 12, nil)
	head := g.Runs(HeadRev, 12, map[string]float64{"msm_h": 1.2})
	for i := range head {
		head[i].Samples = append(head[i].Samples, Sample{Key{ProveBench, "msm_h/step=scatter", "sec/op"}, 0.021 * g.jitter()})
	}
	head = append(head[:6], append(failed(HeadRev, 2, StatusCrashed,
		"exit status 2\ngoroutine 1 [running]:\nmain.main()\n\t/src/prover/groth16.go:88\npanic: cuda: out of memory (code 2)"), head[6:]...)...)
	hist := History{}
	for _, p := range []string{"synthesis", "msm_h", "total"} {
		var vs []float64
		v := 1.0
		for i := range 13 {
			vs = append(vs, v)
			v *= 1 + 0.002*float64(i%5+1)*float64(1-2*(i%2))
		}
		hist[Key{ProveBench, p, "sec/op"}] = vs
	}
	return Input{
		BaseRev: BaseRev, HeadRev: HeadRev,
		Base: base, Head: head,
		History: hist,
		BaseEnv: Env{"cpu": "AMD EPYC 9654 96-Core", "gpu": "NVIDIA H200", "gpu-driver": "580.159.04", "go": "go1.26.8"},
		HeadEnv: Env{"cpu": "AMD EPYC 9654 96-Core", "gpu": "NVIDIA H200", "gpu-driver": "580.126.09", "go": "go1.26.8"},
	}
}

// GoldenReport is the comparison of GoldenInput, with msm_h's regression
// explained by a CPU profile diff made from counts made up for the golden
// files (Compare makes real ones from the runs' profiles, which
// GoldenInput has none of) and by its instructions/op row.
func GoldenReport() *Report {
	r := Compare(GoldenInput(), DefaultOptions())
	d := goldenProfileDiff()
	d.Benchmark = ProveBench
	r.ProfileDiffs = []ProfileDiff{d}
	r.Explanations = Explain(r.Phases, r.ProfileDiffs)
	return r
}

// goldenProfileDiff is msm_h's CPU profile diff for the golden files,
// from 12 profiles a side of 4180 and 5035 samples of 10 ms. split and
// memmove grew by far more than noise; addMixed (41.2% → 42.0%) and
// msmG1's cumulative share (96.3% → 97.1%) grew by less, and are not
// listed.
func goldenProfileDiff() ProfileDiff {
	const (
		split    = "github.com/perfbot/perfbot/prover/groth16.split[...]"
		msmG1    = "github.com/perfbot/perfbot/prover/groth16.msmG1"
		addMixed = "github.com/consensys/gnark-crypto/ecc/bls12-381.(*g1JacExtended).addMixed"
		memmove  = "runtime.memmove"
		mainMain = "main.main"
	)
	side := func(samples int64, flat, cum map[string]int64) phaseTally {
		t := phaseTally{profiles: 12, unit: "nanoseconds", samples: samples, value: samples * 10_000_000,
			flat: newFuncTally(), cum: newFuncTally()}
		for name, n := range flat {
			t.flat.add(name, n*10_000_000, n)
		}
		for name, n := range cum {
			t.cum.add(name, n*10_000_000, n)
		}
		return t
	}
	base := side(4180,
		map[string]int64{split: 130, memmove: 33, addMixed: 1722, msmG1: 2295},
		map[string]int64{split: 167, memmove: 33, addMixed: 1722, msmG1: 4025, mainMain: 4180})
	head := side(5035,
		map[string]int64{split: 493, memmove: 146, addMixed: 2115, msmG1: 2281},
		map[string]int64{split: 634, memmove: 146, addMixed: 2115, msmG1: 4889, mainMain: 5035})
	return diffTallies("msm_h", ProfileOptions{}.withDefaults(), base, head)
}

// ErrorReport is a comparison whose head never built.
func ErrorReport() *Report {
	g := NewSynth(43, 0.004)
	return Compare(Input{
		BaseRev: BaseRev, HeadRev: HeadRev,
		Base: g.Runs(BaseRev, 6, nil),
		Head: failed(HeadRev, 3, StatusBuildFailed, "prover/msm.go:12:2: undefined: bucketSort"),
	}, DefaultOptions())
}

package groth16

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"runtime/pprof"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/parallel"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// A Proof is a Groth16 proof: A and C in G1, B in G2.
type Proof struct {
	A bls12381.G1Affine
	B bls12381.G2Affine
	C bls12381.G1Affine
}

// PhaseFunc runs one named phase; the caller times it, labels it, counts it.
// It must call run exactly once and return its error (it may wrap it).
type PhaseFunc func(name string, run func() error) error

// The phases of Prove, in the order they run.
const (
	PhaseNTT   = "ntt"    // H polynomial: inverse FFT, coset FFT, divide by Z, inverse coset FFT
	PhaseMSMA  = "msm_a"  // A query, G1
	PhaseMSMB1 = "msm_b1" // B query, G1
	PhaseMSMB2 = "msm_b2" // B query, G2
	// PhaseMSMB2Wait is the wait for msm_b2 when it runs beside the G1
	// MSMs (an offloading engine): how long the proof stood still after
	// msm_h until the host's G2 MSM was done. It is a phase of its own
	// only then; msm_b2 stays the G2 MSM's own time.
	PhaseMSMB2Wait = "msm_b2_wait"
	PhaseMSML      = "msm_l"    // L query, G1
	PhaseMSMH      = "msm_h"    // H query, G1
	PhaseAssemble  = "assemble" // blinding and the final A, B, C
)

// Phases lists the phase names in the order Prove runs them.
var Phases = []string{PhaseNTT, PhaseMSMA, PhaseMSMB1, PhaseMSMB2, PhaseMSML, PhaseMSMH, PhaseAssemble}

// ProveOptions configure Prove; the zero value runs every phase directly on
// the CPU engine.
type ProveOptions struct {
	Phase  PhaseFunc // nil: run each phase directly
	Engine Engine    // nil: CPU{}
	// Beside, when set, runs msm_b2 when it runs beside the G1 MSMs (an
	// engine that offloads G1 but not G2): it must call run exactly once, on the goroutine
	// it is called on (labelled phase=msm_b2), and may measure it. It
	// returns before the wait phase (PhaseMSMB2Wait) does. Phase is not
	// called for it: its time overlaps msm_a … msm_h.
	Beside func(name string, run func())

	// Scratch, when set, keeps the buffers of the gathered scalars from
	// one Prove to the next with the same key (a query's scalars are as
	// many every proof). A fresh buffer is zeroed by the goroutine that
	// makes it, which was half of a gather's time (BenchmarkGather 46 ms
	// against BenchmarkGatherReused 24 ms at 2^22 on two cores). A Scratch
	// serves one Prove at a time.
	Scratch *Scratch

	plainMSM bool // tests and benchmarks: skip the 0/1 split
}

// A Scratch holds buffers that Prove reuses (ProveOptions.Scratch).
type Scratch struct {
	a, b []fr.Element // the A and B queries' gathered scalars
}

// Stats describes the work of one proof.
type Stats struct {
	Constraints int // the circuit's constraints, without the input rows
	DomainSize  int // n
	// Per MSM phase, the real sizes.
	A, B1, B2, L, H MSMStats
}

// NewBlinding draws the two blinding scalars r and s of a proof from rng
// (crypto/rand.Reader in production).
func NewBlinding(rng io.Reader) (r, s fr.Element, err error) {
	if r, err = randomScalar(rng); err != nil {
		return r, s, fmt.Errorf("groth16 blinding: %w", err)
	}
	if s, err = randomScalar(rng); err != nil {
		return r, s, fmt.Errorf("groth16 blinding: %w", err)
	}
	return r, s, nil
}

// Prove makes a proof that cs's witness satisfies its constraints, with
// blinding scalars r and s (see NewBlinding). cs must be a Prove-mode system
// of the circuit pk was made for, and satisfied (cs.Err() == nil). ctx is
// checked before every phase. A proof made with a random key (pk.Random)
// takes the usual time but does not verify.
func Prove(ctx context.Context, pk *ProvingKey, cs *r1cs.System, r, s fr.Element, opts ProveOptions) (*Proof, *Stats, error) {
	if cs.Mode()&r1cs.Prove == 0 {
		return nil, nil, errors.New("groth16 prove: need a Prove-mode r1cs system (it has no witness evaluations)")
	}
	if err := cs.Err(); err != nil {
		return nil, nil, fmt.Errorf("groth16 prove: witness does not satisfy the circuit: %w", err)
	}
	if err := pk.check(); err != nil {
		return nil, nil, fmt.Errorf("groth16 prove: %w", err)
	}
	if cs.NumInputs() != pk.NumInputs || cs.NumAux() != pk.NumAux || cs.NumConstraints() != pk.NumConstraints {
		return nil, nil, fmt.Errorf("groth16 prove: circuit has %d inputs, %d aux, %d constraints; the proving key was made for %d, %d, %d",
			cs.NumInputs(), cs.NumAux(), cs.NumConstraints(), pk.NumInputs, pk.NumAux, pk.NumConstraints)
	}
	phase := opts.Phase
	if phase == nil {
		phase = func(_ string, run func() error) error { return run() }
	}
	eng := opts.Engine
	if eng == nil {
		eng = CPU{}
	}
	st := &Stats{Constraints: pk.NumConstraints, DomainSize: pk.DomainSize}
	inputs, aux := cs.Inputs(), cs.Aux()

	var (
		h, bScalars       []fr.Element
		msmA, msmB1, msmL bls12381.G1Jac
		msmH              bls12381.G1Jac
		msmB2             bls12381.G2Jac
		proof             Proof
	)
	// An offloading engine (a GPU) gets the G1 MSMs whole, and msm_b2 then
	// runs on the host beside them: it starts in msm_a, once msm_a's
	// scalars are gathered, runs through opts.Beside, which may measure
	// it, and the proof waits for it after msm_h in phase msm_b2_wait. Its
	// CPU samples carry the label phase=msm_b2 (prover.Run's label key).
	//
	// An engine that runs the G2 MSM on its device too (OffloadsG2) gets
	// msm_b2 in its turn, between msm_b1 and msm_l, on the proof's own
	// thread of control: the device runs one MSM at a time, so beside
	// would only queue it behind the G1 MSMs and charge its device steps
	// to whichever phase came next.
	off := offloads(eng)
	offG2 := off && offloadsG2(eng)
	beside := off && !offG2
	plainG1 := opts.plainMSM || off
	// msmKey is msmG1 on a query of pk, which an offloading Keeper keeps
	// on its device for this proof and the next ones.
	keeper, _ := eng.(Keeper)
	msmKey := func(points []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, MSMStats, error) {
		if keeper != nil && off {
			keeper.KeepG1(points)
		}
		return msmG1(eng, points, scalars, plainG1)
	}
	keeperG2, _ := eng.(KeeperG2)
	scratch := opts.Scratch
	if scratch == nil {
		scratch = new(Scratch)
	}
	var (
		b2done    = make(chan struct{})
		b2err     error
		b2started bool
	)
	defer func() {
		if b2started {
			<-b2done // never leave it running behind an error
		}
	}()
	runB2 := func() {
		defer close(b2done)
		work := func() {
			if offG2 && keeperG2 != nil {
				keeperG2.KeepG2(pk.B2)
			}
			msmB2, st.B2, b2err = msmG2(eng, pk.B2, bScalars, opts.plainMSM)
		}
		if beside && opts.Beside != nil {
			opts.Beside(PhaseMSMB2, work)
			return
		}
		work()
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{PhaseNTT, func() (err error) {
			h, err = computeH(eng, cs, pk.DomainSize)
			return err
		}},
		{PhaseMSMA, func() (err error) {
			// Both gathers before msm_b2 starts: what msm_a allocates is
			// done by then (a meter charges what the host does beside the
			// G1 MSMs to msm_b2).
			aScalars := gather(scratch.a, pk.ADensity, inputs, aux)
			scratch.a = aScalars
			if beside {
				bScalars = gather(scratch.b, pk.BDensity, inputs, aux)
				scratch.b = bScalars
				b2started = true
				go pprof.Do(ctx, pprof.Labels("phase", PhaseMSMB2), func(context.Context) { runB2() })
			}
			msmA, st.A, err = msmKey(pk.A, aScalars)
			return err
		}},
		{PhaseMSMB1, func() (err error) {
			if !beside {
				bScalars = gather(scratch.b, pk.BDensity, inputs, aux)
				scratch.b = bScalars
			}
			msmB1, st.B1, err = msmKey(pk.B1, bScalars)
			return err
		}},
		{PhaseMSMB2, func() error {
			if !beside {
				b2started = true
				runB2()
			}
			<-b2done
			bScalars = nil
			return b2err
		}},
		{PhaseMSML, func() (err error) {
			msmL, st.L, err = msmKey(pk.L, aux)
			return err
		}},
		{PhaseMSMH, func() (err error) {
			msmH, st.H, err = msmKey(pk.H, h[:pk.DomainSize-1])
			h = nil
			return err
		}},
		{PhaseAssemble, func() error {
			proof = assemble(pk, r, s, &msmA, &msmB1, &msmB2, &msmL, &msmH)
			return nil
		}},
	}
	if beside { // msm_b2's wait (index 3) comes after msm_l and msm_h
		steps[3].name = PhaseMSMB2Wait
		steps[3], steps[4], steps[5] = steps[4], steps[5], steps[3]
	}
	for _, step := range steps {
		if err := ctx.Err(); err != nil {
			return nil, nil, fmt.Errorf("groth16 prove: before %s: %w", step.name, err)
		}
		ran := false
		err := phase(step.name, func() error {
			ran = true
			return step.run()
		})
		if err != nil {
			return nil, nil, fmt.Errorf("groth16 prove: %s: %w", step.name, err)
		}
		if !ran {
			return nil, nil, fmt.Errorf("groth16 prove: the PhaseFunc returned without running phase %s", step.name)
		}
	}
	return &proof, st, nil
}

// computeH lays out A, B, C at the witness over the domain (constraint rows,
// then input rows input_k · 0 = 0, then zeros) and has the engine compute
// h's coefficients. h has degree ≤ n−2 when the witness is satisfying; a
// nonzero top coefficient is reported as an error.
//
// A System made with room for the domain (r1cs.Sizes.Domain) hands its
// evaluations over in place (r1cs.System.TakeEvaluations), which saves
// allocating and copying three domain-sized vectors (1.5 GiB and about
// half a second of host time a proof at 2^24 on the H100); any other is
// copied.
func computeH(eng Engine, cs *r1cs.System, n int) ([]fr.Element, error) {
	m := cs.NumConstraints()
	a, b, c, ok := cs.TakeEvaluations(n)
	if !ok {
		ea, eb, ec := cs.Evaluations()
		a, b, c = make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
		copy(a, ea)
		copy(b, eb)
		copy(c, ec)
	}
	copy(a[m:], cs.Inputs())
	if err := eng.QuotientH(a, b, c); err != nil {
		return nil, err
	}
	if !a[n-1].IsZero() {
		return nil, errors.New("h has degree n−1: A·B − C is not divisible by Z (unsatisfied constraints)")
	}
	return a, nil
}

// gather returns the assignment values of the variables (inputs then aux)
// whose density flag is set, in order, in dst's memory when it has room.
func gather(dst []fr.Element, density []bool, inputs, aux []fr.Element) []fr.Element {
	// Two passes over chunks of the density, on every core: each chunk's
	// count, then each chunk's copy at its offset. One core copied ~2.3
	// GB/s (BenchmarkGather), ~200 ms for a query at 2^24, twice a proof.
	n := len(density)
	chunks := min(runtime.GOMAXPROCS(0)*4, max(1, n>>16))
	bound := func(c int) int { return c * n / chunks }
	offset := make([]int, chunks+1)
	parallel.Execute(chunks, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			k := 0
			for _, in := range density[bound(c):bound(c+1)] {
				if in {
					k++
				}
			}
			offset[c+1] = k
		}
	})
	for c := range chunks {
		offset[c+1] += offset[c]
	}
	out := dst[:0]
	if cap(out) < offset[chunks] {
		out = make([]fr.Element, offset[chunks])
	}
	out = out[:offset[chunks]]
	ni := len(inputs)
	parallel.Execute(chunks, func(lo, hi int) {
		for c := lo; c < hi; c++ {
			k := offset[c]
			for j := bound(c); j < bound(c+1); j++ {
				if !density[j] {
					continue
				}
				if j < ni {
					out[k] = inputs[j]
				} else {
					out[k] = aux[j-ni]
				}
				k++
			}
		}
	})
	return out
}

// assemble forms the proof from the MSM results and the blinding:
//
//	A = α + Σ a_j·u_j + r·δ
//	B = β + Σ a_j·v_j + s·δ          (in G2; B1 the same in G1)
//	C = s·A + r·B1 − r·s·δ + Σ a_j·L_j + Σ h_i·H_i
func assemble(pk *ProvingKey, r, s fr.Element, msmA, msmB1 *bls12381.G1Jac, msmB2 *bls12381.G2Jac, msmL, msmH *bls12381.G1Jac) Proof {
	var rb, sb, rsb big.Int
	var rs fr.Element
	rs.Mul(&r, &s)
	r.BigInt(&rb)
	s.BigInt(&sb)
	rs.BigInt(&rsb)

	var a, b1, c, t bls12381.G1Jac
	a.FromAffine(&pk.Delta1)
	a.ScalarMultiplication(&a, &rb)
	a.AddMixed(&pk.Alpha1)
	a.AddAssign(msmA)

	b1.FromAffine(&pk.Delta1)
	b1.ScalarMultiplication(&b1, &sb)
	b1.AddMixed(&pk.Beta1)
	b1.AddAssign(msmB1)

	var b2 bls12381.G2Jac
	b2.FromAffine(&pk.Delta2)
	b2.ScalarMultiplication(&b2, &sb)
	b2.AddMixed(&pk.Beta2)
	b2.AddAssign(msmB2)

	c.ScalarMultiplication(&a, &sb)
	t.ScalarMultiplication(&b1, &rb)
	c.AddAssign(&t)
	t.FromAffine(&pk.Delta1)
	t.ScalarMultiplication(&t, &rsb)
	c.SubAssign(&t)
	c.AddAssign(msmL)
	c.AddAssign(msmH)

	var p Proof
	p.A.FromJacobian(&a)
	p.B.FromJacobian(&b2)
	p.C.FromJacobian(&c)
	return p
}

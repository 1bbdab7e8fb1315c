package groth16

import (
	"context"
	"crypto/rand"
	"errors"
	"math/big"
	mrand "math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// fixture is one small circuit with real keys, shared by the tests that
// only read it.
type fixture struct {
	cs     *r1cs.System // Prove|Setup, witness 1
	pk     *ProvingKey
	vk     *VerifyingKey
	proof  *Proof
	stats  *Stats
	phases []string
}

var smallFixture = func() func(t *testing.T) *fixture {
	var f *fixture
	return func(t *testing.T) *fixture {
		t.Helper()
		if f != nil {
			return f
		}
		cs := buildCircuit(r1cs.Prove|r1cs.Setup, 7, 1, small)
		if err := cs.Err(); err != nil {
			t.Fatalf("test circuit is unsatisfied: %v", err)
		}
		pk, vk, err := Setup(cs, rand.Reader)
		if err != nil {
			t.Fatalf("Setup: %v", err)
		}
		nf := &fixture{cs: cs, pk: pk, vk: vk}
		proof, stats, err := Prove(context.Background(), pk, cs, randScalar(t), randScalar(t), ProveOptions{
			Phase: func(name string, run func() error) error {
				nf.phases = append(nf.phases, name)
				return run()
			},
		})
		if err != nil {
			t.Fatalf("Prove: %v", err)
		}
		nf.proof, nf.stats = proof, stats
		f = nf
		return f
	}
}()

var ecConfig = ecc.MultiExpConfig{}

func randScalar(t testing.TB) fr.Element {
	t.Helper()
	s, err := randomScalar(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestValidProofVerifies(t *testing.T) {
	f := smallFixture(t)
	if err := Verify(f.vk, f.proof, publicInputs(f.cs)); err != nil {
		t.Fatalf("Verify(valid proof) = %v, want nil", err)
	}
	if f.pk.Random || f.vk.Random {
		t.Errorf("Setup keys are marked random")
	}
}

func TestProofWithAnotherWitnessOfTheSameCircuitVerifies(t *testing.T) {
	f := smallFixture(t)
	cs := buildCircuit(r1cs.Prove, 7, 99, small)
	if in1, in2 := publicInputs(cs), publicInputs(f.cs); slices.Equal(in1, in2) {
		t.Fatalf("witness seeds 1 and 99 gave the same public inputs %v", in1)
	}
	proof, _, err := Prove(context.Background(), f.pk, cs, randScalar(t), randScalar(t), ProveOptions{})
	if err != nil {
		t.Fatalf("Prove: %v", err)
	}
	if err := Verify(f.vk, proof, publicInputs(cs)); err != nil {
		t.Fatalf("Verify = %v, want nil", err)
	}
	// The proof is for its own statement, not the fixture's.
	if err := Verify(f.vk, proof, publicInputs(f.cs)); !errors.Is(err, ErrInvalidProof) {
		t.Fatalf("Verify(other statement) = %v, want ErrInvalidProof", err)
	}
}

func TestVerifyRejectsWrongPublicInput(t *testing.T) {
	f := smallFixture(t)
	for k := range publicInputs(f.cs) {
		in := publicInputs(f.cs)
		in[k].Add(&in[k], new(fr.Element).SetOne())
		if err := Verify(f.vk, f.proof, in); !errors.Is(err, ErrInvalidProof) {
			t.Errorf("input %d + 1: Verify = %v, want ErrInvalidProof", k, err)
		}
	}
}

func TestVerifyRejectsTamperedProof(t *testing.T) {
	f := smallFixture(t)
	_, _, g1, g2 := bls12381.Generators()
	tampered := map[string]Proof{}
	p := *f.proof
	p.A.Add(&p.A, &g1)
	tampered["A+G1"] = p
	p = *f.proof
	p.B.Add(&p.B, &g2)
	tampered["B+G2"] = p
	p = *f.proof
	p.C.Add(&p.C, &g1)
	tampered["C+G1"] = p
	p = *f.proof
	p.A, p.C = p.C, p.A
	tampered["A<->C"] = p
	p = *f.proof
	p.A.Y.Neg(&p.A.Y) // −A: still in the group
	tampered["-A"] = p
	p = *f.proof
	p.C.X.SetOne() // (1, y) is not on the curve
	tampered["C off curve"] = p
	p = *f.proof
	p.A.SetInfinity()
	tampered["A at infinity"] = p
	for name, p := range tampered {
		if err := Verify(f.vk, &p, publicInputs(f.cs)); !errors.Is(err, ErrInvalidProof) {
			t.Errorf("%s: Verify = %v, want ErrInvalidProof", name, err)
		}
	}
}

func TestVerifyRejectsWrongInputCount(t *testing.T) {
	f := smallFixture(t)
	in := publicInputs(f.cs)
	for _, bad := range [][]fr.Element{in[:len(in)-1], append(in, fr.Element{}), nil} {
		err := Verify(f.vk, f.proof, bad)
		if err == nil || errors.Is(err, ErrInvalidProof) {
			t.Errorf("Verify with %d inputs (want %d) = %v, want a count error", len(bad), len(in), err)
		}
	}
}

func TestProveRunsPhasesInOrderAndReportsSizes(t *testing.T) {
	f := smallFixture(t)
	if !slices.Equal(f.phases, Phases) {
		t.Errorf("phases = %v, want %v", f.phases, Phases)
	}
	want := []string{"ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "assemble"}
	if !slices.Equal(Phases, want) {
		t.Errorf("Phases = %v, want %v", Phases, want)
	}
	st, pk, cs := f.stats, f.pk, f.cs
	if st.DomainSize != pk.DomainSize || st.Constraints != cs.NumConstraints() {
		t.Errorf("stats domain %d constraints %d, want %d %d", st.DomainSize, st.Constraints, pk.DomainSize, cs.NumConstraints())
	}
	// L: one point per aux variable; zeros and ones counted from the witness.
	var zeros, ones int
	for _, v := range cs.Aux() {
		switch {
		case v.IsZero():
			zeros++
		case v.IsOne():
			ones++
		}
	}
	wantL := MSMStats{Points: cs.NumAux(), Zeros: zeros, Ones: ones, MultiExp: cs.NumAux() - zeros - ones}
	if st.L != wantL {
		t.Errorf("L stats = %+v, want %+v", st.L, wantL)
	}
	if zeros < 50 || ones < 50 {
		t.Errorf("test circuit has %d zero and %d one aux values; the 0/1 path needs many", zeros, ones)
	}
	if st.H.Points != pk.DomainSize-1 {
		t.Errorf("H points = %d, want n−1 = %d", st.H.Points, pk.DomainSize-1)
	}
	for name, s := range map[string]MSMStats{"A": st.A, "B1": st.B1, "B2": st.B2, "L": st.L, "H": st.H} {
		if s.Zeros+s.Infinity+s.Ones+s.MultiExp != s.Points {
			t.Errorf("%s stats %+v do not add up", name, s)
		}
	}
	if st.A.Points != len(pk.A) || st.B1.Points != len(pk.B1) || st.B2 != st.B1 {
		t.Errorf("A/B stats %+v %+v %+v for |A|=%d |B|=%d", st.A, st.B1, st.B2, len(pk.A), len(pk.B1))
	}
	// Every variable that appears in A (the inputs always do) has a point.
	if n := countTrue(pk.ADensity); n == pk.NumVariables() || n == 0 {
		t.Errorf("A density %d of %d variables: the test circuit should leave some out", n, pk.NumVariables())
	}
}

func TestProveStopsWhenContextIsCancelled(t *testing.T) {
	f := smallFixture(t)
	ctx, cancel := context.WithCancel(context.Background())
	var ran []string
	_, _, err := Prove(ctx, f.pk, f.cs, randScalar(t), randScalar(t), ProveOptions{
		Phase: func(name string, run func() error) error {
			ran = append(ran, name)
			if name == PhaseMSMA {
				cancel()
			}
			return run()
		},
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Prove = %v, want context.Canceled", err)
	}
	if !slices.Equal(ran, []string{PhaseNTT, PhaseMSMA}) {
		t.Errorf("ran %v, want [ntt msm_a]", ran)
	}
}

func TestProveReturnsPhaseError(t *testing.T) {
	f := smallFixture(t)
	boom := errors.New("boom")
	_, _, err := Prove(context.Background(), f.pk, f.cs, randScalar(t), randScalar(t), ProveOptions{
		Phase: func(name string, run func() error) error {
			if name == PhaseMSML {
				return boom
			}
			return run()
		},
	})
	if !errors.Is(err, boom) {
		t.Fatalf("Prove = %v, want boom", err)
	}
}

func TestProveRejectsUnsatisfiedWitnessAndWrongCircuit(t *testing.T) {
	f := smallFixture(t)
	cs := r1cs.NewSystem(r1cs.Prove, r1cs.Sizes{})
	var two, three fr.Element
	two.SetUint64(2)
	three.SetUint64(3)
	v := cs.Alloc(&two)
	a, b, c := cs.Begin()
	a.AddVar(v)
	b.AddVar(v)
	c.AddConst(&three) // 2·2 ≠ 3
	cs.Enforce("bad", a, b, c)
	if _, _, err := Prove(context.Background(), f.pk, cs, randScalar(t), randScalar(t), ProveOptions{}); err == nil {
		t.Errorf("Prove(unsatisfied) = nil error")
	}
	other := buildCircuit(r1cs.Prove, 7, 1, circuitSize{bits: 10, words: 1, muls: 2})
	if _, _, err := Prove(context.Background(), f.pk, other, randScalar(t), randScalar(t), ProveOptions{}); err == nil {
		t.Errorf("Prove(other circuit) = nil error")
	}
}

func TestRandomKeysHaveSetupShapesAndTheirProofsDoNotVerify(t *testing.T) {
	f := smallFixture(t)
	pk, vk, err := RandomKeys(f.cs, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if !pk.Random || !vk.Random {
		t.Fatalf("RandomKeys: Random = %v/%v, want true", pk.Random, vk.Random)
	}
	if pk.Shape != f.pk.Shape || pk.DomainSize != f.pk.DomainSize ||
		!slices.Equal(pk.ADensity, f.pk.ADensity) || !slices.Equal(pk.BDensity, f.pk.BDensity) {
		t.Fatalf("random key shape or density differs from Setup's")
	}
	for name, n := range map[string][2]int{
		"A": {len(pk.A), len(f.pk.A)}, "B1": {len(pk.B1), len(f.pk.B1)}, "B2": {len(pk.B2), len(f.pk.B2)},
		"L": {len(pk.L), len(f.pk.L)}, "H": {len(pk.H), len(f.pk.H)}, "IC": {len(vk.IC), len(f.vk.IC)},
	} {
		if n[0] != n[1] {
			t.Errorf("%s: %d points, Setup gives %d", name, n[0], n[1])
		}
	}
	for i := range pk.A {
		if !pk.A[i].IsInSubGroup() {
			t.Fatalf("random A[%d] is not a G1 point", i)
		}
	}
	for i := range pk.B2 {
		if !pk.B2[i].IsInSubGroup() {
			t.Fatalf("random B2[%d] is not a G2 point", i)
		}
	}
	proof, _, err := Prove(context.Background(), pk, f.cs, randScalar(t), randScalar(t), ProveOptions{})
	if err != nil {
		t.Fatalf("Prove with random keys: %v", err)
	}
	if err := Verify(vk, proof, publicInputs(f.cs)); !errors.Is(err, ErrInvalidProof) {
		t.Fatalf("Verify(random-key proof) = %v, want ErrInvalidProof", err)
	}
}

// TestQuotientHInPlaceEqualsTheCopy checks that a System made with room
// for the domain, whose evaluations computeH takes over in place, gives
// the very h of one whose evaluations are copied, and that the prover's
// proof from it verifies.
func TestQuotientHInPlaceEqualsTheCopy(t *testing.T) {
	copied := buildCircuit(r1cs.Prove, 5, 6, small)
	n := DomainSize(copied)
	inPlace := buildCircuitIn(r1cs.Prove, 5, 6, small, n)
	want, err := computeH(CPU{}, copied, n)
	if err != nil {
		t.Fatal(err)
	}
	if a, _, _ := copied.Evaluations(); len(a) != copied.NumConstraints() {
		t.Fatalf("the copying path took the evaluations: %d left of %d", len(a), copied.NumConstraints())
	}
	got, err := computeH(CPU{}, inPlace, n)
	if err != nil {
		t.Fatal(err)
	}
	if a, b, c := inPlace.Evaluations(); a != nil || b != nil || c != nil {
		t.Errorf("the System kept evaluations it handed over")
	}
	if len(got) != len(want) {
		t.Fatalf("h has %d coefficients; want %d", len(got), len(want))
	}
	for i := range want {
		if !got[i].Equal(&want[i]) {
			t.Fatalf("h[%d] differs in place: %v, copied %v", i, got[i].String(), want[i].String())
		}
	}
	// Short of the domain, nothing is handed over.
	short := buildCircuitIn(r1cs.Prove, 5, 6, small, n/2)
	if _, _, _, ok := short.TakeEvaluations(n); ok {
		t.Error("TakeEvaluations handed over evaluations without room for the domain")
	}
	if a, _, _ := short.Evaluations(); len(a) != short.NumConstraints() {
		t.Error("a refused TakeEvaluations dropped the evaluations")
	}

	setup := buildCircuit(r1cs.Setup, 5, 6, small)
	pk, vk, err := Setup(setup, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	proofCS := buildCircuitIn(r1cs.Prove, 5, 6, small, pk.DomainSize)
	proof, _, err := Prove(context.Background(), pk, proofCS, randScalar(t), randScalar(t), ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(vk, proof, publicInputs(proofCS)); err != nil {
		t.Errorf("the proof of a System laid out in place does not verify: %v", err)
	}
}

func TestQuotientHSatisfiesDivisibilityAtRandomPoint(t *testing.T) {
	cs := buildCircuit(r1cs.Prove, 3, 4, small)
	n := DomainSize(cs)
	h, err := computeH(CPU{}, cs, n)
	if err != nil {
		t.Fatal(err)
	}
	// The evaluations on the domain, laid out as Prove does.
	ea, eb, ec := cs.Evaluations()
	av, bv, cv := make([]fr.Element, n), make([]fr.Element, n), make([]fr.Element, n)
	copy(av, ea)
	copy(bv, eb)
	copy(cv, ec)
	copy(av[len(ea):], cs.Inputs())

	// Naive Lagrange basis at ζ: L_i(ζ) = Π_{k≠i} (ζ − ω^k)/(ω^i − ω^k).
	zeta := randScalar(t)
	omega, err := fr.Generator(uint64(n))
	if err != nil {
		t.Fatal(err)
	}
	w := make([]fr.Element, n)
	w[0].SetOne()
	for i := 1; i < n; i++ {
		w[i].Mul(&w[i-1], &omega)
	}
	var A, B, C fr.Element
	for i := 0; i < n; i++ {
		var num, den, t fr.Element
		num.SetOne()
		den.SetOne()
		for k := 0; k < n; k++ {
			if k == i {
				continue
			}
			t.Sub(&zeta, &w[k])
			num.Mul(&num, &t)
			t.Sub(&w[i], &w[k])
			den.Mul(&den, &t)
		}
		num.Div(&num, &den)
		t.Mul(&av[i], &num)
		A.Add(&A, &t)
		t.Mul(&bv[i], &num)
		B.Add(&B, &t)
		t.Mul(&cv[i], &num)
		C.Add(&C, &t)
	}
	var H, Z, lhs, rhs fr.Element
	for i := len(h) - 1; i >= 0; i-- { // Horner
		H.Mul(&H, &zeta).Add(&H, &h[i])
	}
	Z.Exp(zeta, big.NewInt(int64(n)))
	Z.Sub(&Z, new(fr.Element).SetOne())
	lhs.Mul(&A, &B).Sub(&lhs, &C)
	rhs.Mul(&H, &Z)
	if !lhs.Equal(&rhs) {
		t.Fatalf("A(ζ)B(ζ) − C(ζ) = %s, H(ζ)Z(ζ) = %s", lhs.String(), rhs.String())
	}
	if h[n-1].IsZero() && h[n-2].IsZero() && h[0].IsZero() {
		t.Errorf("h looks empty")
	}

	// An unsatisfied row makes A·B − C indivisible by Z.
	ea[5].Add(&ea[5], new(fr.Element).SetOne())
	if _, err := computeH(CPU{}, cs, n); err == nil {
		t.Errorf("computeH with a broken row = nil error")
	}
}

func TestSplitMSMEqualsMultiExp(t *testing.T) {
	rng := mrand.New(mrand.NewPCG(11, 12))
	for _, n := range []int{1, 7, 300, 5000} {
		p1, err := randomPointsG1(rand.Reader, n)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := randomPointsG2(rand.Reader, n)
		if err != nil {
			t.Fatal(err)
		}
		scalars := make([]fr.Element, n)
		var want MSMStats
		want.Points = n
		for i := range scalars {
			inf := rng.IntN(10) == 0
			if inf {
				p1[i].SetInfinity()
				p2[i].SetInfinity()
			}
			switch rng.IntN(5) {
			case 0, 1:
				want.Zeros++
				continue
			case 2, 3:
				scalars[i].SetOne()
			default:
				scalars[i] = randScalar(t)
			}
			switch {
			case inf:
				want.Infinity++
			case scalars[i].IsOne():
				want.Ones++
			default:
				want.MultiExp++
			}
		}
		var ref1 bls12381.G1Jac
		var ref2 bls12381.G2Jac
		if _, err := ref1.MultiExp(p1, scalars, ecConfig); err != nil {
			t.Fatal(err)
		}
		if _, err := ref2.MultiExp(p2, scalars, ecConfig); err != nil {
			t.Fatal(err)
		}
		got1, st1, err := msmG1(CPU{}, p1, scalars, false)
		if err != nil {
			t.Fatal(err)
		}
		got2, st2, err := msmG2(CPU{}, p2, scalars, false)
		if err != nil {
			t.Fatal(err)
		}
		if !got1.Equal(&ref1) {
			t.Errorf("n=%d: split G1 MSM differs from MultiExp", n)
		}
		if !got2.Equal(&ref2) {
			t.Errorf("n=%d: split G2 MSM differs from MultiExp", n)
		}
		if st1 != want || st2 != want {
			t.Errorf("n=%d: stats %+v / %+v, want %+v", n, st1, st2, want)
		}
	}
}

func TestSplitMSMOfOnlyZerosIsInfinity(t *testing.T) {
	pts, err := randomPointsG1(rand.Reader, 10)
	if err != nil {
		t.Fatal(err)
	}
	got, st, err := msmG1(CPU{}, pts, make([]fr.Element, 10), false)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Z.IsZero() || st.Zeros != 10 {
		t.Errorf("Σ 0·P = %v (stats %+v), want infinity", got.String(), st)
	}
}

func TestFixedBaseMatchesScalarMultiplication(t *testing.T) {
	_, _, g1, g2 := bls12381.Generators()
	var minusOne fr.Element
	minusOne.SetOne().Neg(&minusOne)
	scalars := []fr.Element{{}, *new(fr.Element).SetOne(), minusOne, *new(fr.Element).SetUint64(1 << 40)}
	for range 40 {
		scalars = append(scalars, randScalar(t))
	}
	got1 := fixedBaseG1(&g1, scalars)
	got2 := fixedBaseG2(&g2, scalars)
	for i := range scalars {
		var b big.Int
		scalars[i].BigInt(&b)
		var w1 bls12381.G1Affine
		var w2 bls12381.G2Affine
		w1.ScalarMultiplication(&g1, &b)
		w2.ScalarMultiplication(&g2, &b)
		if !got1[i].Equal(&w1) {
			t.Errorf("G1 scalar %d: fixed-base result differs", i)
		}
		if !got2[i].Equal(&w2) {
			t.Errorf("G2 scalar %d: fixed-base result differs", i)
		}
	}
	if !got1[0].IsInfinity() || !got2[0].IsInfinity() {
		t.Errorf("0·G is not infinity")
	}
}

func TestShapeDependsOnStructureNotWitness(t *testing.T) {
	a := Shape(buildCircuit(r1cs.Setup, 7, 1, small))
	b := Shape(buildCircuit(r1cs.Setup|r1cs.Prove, 7, 2, small))
	c := Shape(buildCircuit(r1cs.Setup, 8, 1, small))
	d := Shape(buildCircuit(r1cs.Prove, 7, 1, small))
	if a != b {
		t.Errorf("same structure, different witness: %s vs %s", a, b)
	}
	if a == c {
		t.Errorf("different structure, same digest %s", a)
	}
	if a == d {
		t.Errorf("a Prove-only system has the digest of the Setup-mode one")
	}
}

func TestSetupRejectsProveOnlySystem(t *testing.T) {
	cs := buildCircuit(r1cs.Prove, 7, 1, circuitSize{bits: 4})
	if _, _, err := Setup(cs, rand.Reader); err == nil {
		t.Errorf("Setup(Prove-only) = nil error")
	}
	if _, _, err := RandomKeys(cs, rand.Reader); err == nil {
		t.Errorf("RandomKeys(Prove-only) = nil error")
	}
}

func TestKeysAreIndependentOfWhichSetupModeSystemIsUsed(t *testing.T) {
	// Setup-only and Prove|Setup systems of one circuit give identically
	// shaped keys (the witness is not used).
	f := smallFixture(t)
	pk, vk, err := Setup(buildCircuit(r1cs.Setup, 7, 5, small), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	if pk.Shape != f.pk.Shape || !reflect.DeepEqual(pk.ADensity, f.pk.ADensity) || len(vk.IC) != len(f.vk.IC) {
		t.Fatalf("keys differ in shape")
	}
	proof, _, err := Prove(context.Background(), pk, f.cs, randScalar(t), randScalar(t), ProveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(vk, proof, publicInputs(f.cs)); err != nil {
		t.Fatalf("Verify = %v", err)
	}
}

func TestSumOfOnesHandlesRepeatedOppositeAndInfinitePoints(t *testing.T) {
	base, err := randomPointsG1(rand.Reader, 300)
	if err != nil {
		t.Fatal(err)
	}
	base2, err := randomPointsG2(rand.Reader, 300)
	if err != nil {
		t.Fatal(err)
	}
	// Neighbours in the tree: P,P (doubling), P,−P (cancel), P,∞ and ∞,∞.
	base[1] = base[0]
	base[3].Neg(&base[2])
	base[5].SetInfinity()
	base[6].SetInfinity()
	base[7].SetInfinity()
	base2[1] = base2[0]
	base2[3].Neg(&base2[2])
	base2[5].SetInfinity()
	base2[6].SetInfinity()
	base2[7].SetInfinity()
	idx := make([]int32, 0, 600)
	for i := range base {
		idx = append(idx, int32(i))
	}
	for i := range base { // every point twice more, far apart
		idx = append(idx, int32(i))
	}
	var want1 bls12381.G1Jac
	var want2 bls12381.G2Jac
	want1.X.SetOne()
	want1.Y.SetOne()
	want2.X.SetOne()
	want2.Y.SetOne()
	for _, i := range idx {
		want1.AddMixed(&base[i])
		want2.AddMixed(&base2[i])
	}
	got1 := sumG1(base, idx)
	got2 := sumG2(base2, idx)
	if !got1.Equal(&want1) {
		t.Errorf("G1 batch sum differs from the Jacobian chain")
	}
	if !got2.Equal(&want2) {
		t.Errorf("G2 batch sum differs from the Jacobian chain")
	}
}

func TestProveFailsWhenPhaseFuncSkipsAPhase(t *testing.T) {
	f := smallFixture(t)
	_, _, err := Prove(context.Background(), f.pk, f.cs, randScalar(t), randScalar(t), ProveOptions{
		Phase: func(name string, run func() error) error {
			if name == PhaseMSMH {
				return nil // forgot to run it
			}
			return run()
		},
	})
	if err == nil {
		t.Fatalf("Prove with a PhaseFunc that skips msm_h = nil error")
	}
}

// recordingEngine is CPU that records the sizes it is asked for.
type recordingEngine struct {
	CPU
	g1, g2 []int
	h      []int
}

func (e *recordingEngine) MultiExpG1(p []bls12381.G1Affine, s []fr.Element) (bls12381.G1Jac, error) {
	e.g1 = append(e.g1, len(p))
	return e.CPU.MultiExpG1(p, s)
}

func (e *recordingEngine) MultiExpG2(p []bls12381.G2Affine, s []fr.Element) (bls12381.G2Jac, error) {
	e.g2 = append(e.g2, len(p))
	return e.CPU.MultiExpG2(p, s)
}

func (e *recordingEngine) QuotientH(a, b, c []fr.Element) error {
	e.h = append(e.h, len(a))
	return e.CPU.QuotientH(a, b, c)
}

func TestProveGoesThroughTheEngineWithTheReportedSizes(t *testing.T) {
	f := smallFixture(t)
	eng := &recordingEngine{}
	proof, st, err := Prove(context.Background(), f.pk, f.cs, randScalar(t), randScalar(t), ProveOptions{Engine: eng})
	if err != nil {
		t.Fatal(err)
	}
	if err := Verify(f.vk, proof, publicInputs(f.cs)); err != nil {
		t.Fatalf("Verify = %v", err)
	}
	wantG1 := []int{st.A.MultiExp, st.B1.MultiExp, st.L.MultiExp, st.H.MultiExp}
	if !slices.Equal(eng.g1, wantG1) || !slices.Equal(eng.g2, []int{st.B2.MultiExp}) || !slices.Equal(eng.h, []int{f.pk.DomainSize}) {
		t.Errorf("engine saw G1 %v, G2 %v, H %v; want %v, [%d], [%d]", eng.g1, eng.g2, eng.h, wantG1, st.B2.MultiExp, f.pk.DomainSize)
	}
	if st.A.MultiExp >= st.A.Points/2 {
		t.Errorf("A: %d of %d points went to MultiExp; the bits should have been split off", st.A.MultiExp, st.A.Points)
	}
}

package r1cs

import (
	"errors"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// A squares chain is a toy circuit shaped like the SHA-256 chain: segments
// that each take the previous one's last value, x ← x² + r_j, one aux
// variable and one constraint per step, under "segment"[i]/"step"[j].
type squares struct {
	x0    fr.Element
	r     [][]fr.Element // r[i][j]: step j of segment i
	wrong map[[2]int]bool
}

func newSquares(rng *rand.Rand, segments, steps int) *squares {
	s := &squares{x0: randValue(rng), r: make([][]fr.Element, segments), wrong: map[[2]int]bool{}}
	for i := range s.r {
		s.r[i] = make([]fr.Element, steps)
		for j := range s.r[i] {
			s.r[i][j] = randValue(rng)
		}
	}
	return s
}

// segment adds segment i from x (whose value is xv) and returns its last
// variable and value. A step marked wrong allocates x² + r + 1.
func (s *squares) segment(cs *System, i int, x Variable, xv fr.Element) (Variable, fr.Element) {
	cs.Push("segment", i)
	for j := range s.r[i] {
		var y fr.Element
		y.Square(&xv).Add(&y, &s.r[i][j])
		if s.wrong[[2]int{i, j}] {
			y.Add(&y, &frOne)
		}
		v := cs.Alloc(&y)
		cs.Push("step", j)
		a, b, c := cs.Begin()
		a.AddVar(x)
		b.AddVar(x)
		c.AddVar(v)
		var neg fr.Element
		neg.Neg(&s.r[i][j])
		c.AddConst(&neg)
		cs.Enforce("square", a, b, c)
		cs.Pop()
		x, xv = v, y
	}
	cs.Pop()
	return x, xv
}

// prefix adds the part before the segments: x0 as an input, and one
// constraint 1·x0 = x0.
func (s *squares) prefix(cs *System) Variable {
	x := cs.AllocInput(&s.x0)
	enforceProduct(cs, "prefix", One, x, x)
	return x
}

func (s *squares) sequential(sizes Sizes) *System {
	cs := NewSystem(Prove, sizes)
	x, xv := s.prefix(cs), s.x0
	for i := range s.r {
		x, xv = s.segment(cs, i, x, xv)
	}
	return cs
}

// sharded synthesizes every segment in a shard of its own, importing its
// input value, on one goroutine per shard, started in reverse order.
func (s *squares) sharded(t *testing.T, sizes Sizes) *System {
	t.Helper()
	cs := NewSystem(Prove, sizes)
	s.prefix(cs)
	inputs := make([]fr.Element, len(s.r)) // each segment's input value, native
	xv := s.x0
	for i := range s.r {
		inputs[i] = xv
		for j := range s.r[i] {
			xv.Square(&xv).Add(&xv, &s.r[i][j])
			if s.wrong[[2]int{i, j}] {
				xv.Add(&xv, &frOne)
			}
		}
	}
	specs := make([]ShardSpec, len(s.r))
	for i := range specs {
		specs[i] = ShardSpec{Constraints: len(s.r[i]), Aux: len(s.r[i]), Imports: 1}
	}
	shards, err := cs.Shards(specs)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := len(shards) - 1; i >= 0; i-- {
		wg.Go(func() {
			sh := shards[i]
			s.segment(sh, i, sh.Import(&inputs[i]), inputs[i])
		})
	}
	wg.Wait()
	if err := cs.Join(shards); err != nil {
		t.Fatal(err)
	}
	return cs
}

// TestShardsGiveTheSequentialSystem: a chain synthesized in shards, one
// per segment and all at once, has the sequential chain's inputs, aux
// values and evaluations, bit for bit, in place in the parent's slices.
func TestShardsGiveTheSequentialSystem(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 1))
	for _, shape := range [][2]int{{1, 1}, {1, 9}, {3, 5}, {17, 40}} {
		s := newSquares(rng, shape[0], shape[1])
		n := 1 + shape[0]*shape[1]
		sizes := Sizes{Constraints: n, Inputs: 2, Aux: n - 1}
		seq := s.sequential(sizes)
		par := s.sharded(t, sizes)
		if err := SameSystem(seq, par); err != nil {
			t.Fatalf("seed %d, %v: sharded differs from sequential: %v", seed, shape, err)
		}
		if seq.Err() != nil {
			t.Fatalf("seed %d, %v: %v", seed, shape, seq.Err())
		}
		if cap(par.aux) != n-1 || cap(par.a) != n {
			t.Errorf("%v: capacities %d aux, %d evaluations; want the exact %d and %d: a slice grew", shape, cap(par.aux), cap(par.a), n-1, n)
		}
	}
}

// TestShardsReportTheFirstUnsatisfiedConstraint: with failures in two
// shards, the earlier one by index is reported, as sequential synthesis
// reports it, whatever order the shards ran in; a failure of the parent's
// before the shards comes first, one after them last.
func TestShardsReportTheFirstUnsatisfiedConstraint(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(rand.Uint64(), 2))
	s := newSquares(rng, 6, 7)
	s.wrong[[2]int{4, 2}] = true
	s.wrong[[2]int{1, 5}] = true
	seq, par := s.sequential(Sizes{}), s.sharded(t, Sizes{})
	var ue *UnsatError
	if !errors.As(par.Err(), &ue) {
		t.Fatalf("Err() = %v, want an *UnsatError", par.Err())
	}
	if ue.Index != 1+7+5 || ue.Annotation != "segment[1]/step[5]/square" {
		t.Errorf("sharded: constraint %d (%s), want %d (segment[1]/step[5]/square)", ue.Index, ue.Annotation, 1+7+5)
	}
	if err := SameSystem(seq, par); err != nil {
		t.Fatalf("sharded differs from sequential: %v", err)
	}

	// The parent's own failures, before and after the shards.
	var two fr.Element
	two.SetUint64(2)
	for _, before := range []bool{true, false} {
		cs := NewSystem(Prove, Sizes{})
		bad := cs.AllocInput(&two)
		if before {
			enforceProduct(cs, "before", bad, bad, bad)
		}
		shards, err := cs.Shards([]ShardSpec{{Constraints: 1}})
		if err != nil {
			t.Fatal(err)
		}
		enforceProduct(shards[0], "inside", One, One, bad)
		enforceProduct(cs, "after", bad, One, One)
		if err := cs.Join(shards); err != nil {
			t.Fatal(err)
		}
		want := UnsatError{Index: 0, Annotation: "before"}
		if !before {
			want = UnsatError{Index: 0, Annotation: "inside"}
		}
		if !errors.As(cs.Err(), &ue) || *ue != want {
			t.Errorf("failure before the shards %v: Err() = %v, want %v", before, cs.Err(), &want)
		}
		if got := cs.NumConstraints(); got != 2+btoi(before) {
			t.Errorf("%d constraints, want %d", got, 2+btoi(before))
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// TestJoinRejectsAShardThatMissedItsReservation: a shard that adds fewer
// or more constraints or aux variables than it reserved is an error, not a
// witness with holes or lost values.
func TestJoinRejectsAShardThatMissedItsReservation(t *testing.T) {
	t.Parallel()
	var one fr.Element
	one.SetOne()
	for name, fill := range map[string]func(sh *System){
		"one constraint short": func(sh *System) { sh.Alloc(&one) },
		"one constraint more": func(sh *System) {
			v := sh.Alloc(&one)
			enforceProduct(sh, "x", v, v, v)
			enforceProduct(sh, "x", v, v, v)
		},
		"one aux more": func(sh *System) {
			v := sh.Alloc(&one)
			sh.Alloc(&one)
			enforceProduct(sh, "x", v, v, v)
		},
	} {
		cs := NewSystem(Prove, Sizes{})
		shards, err := cs.Shards([]ShardSpec{{Constraints: 1, Aux: 1}})
		if err != nil {
			t.Fatal(err)
		}
		fill(shards[0])
		if err := cs.Join(shards); err == nil || !strings.Contains(err.Error(), "reserved 1 and 1") {
			t.Errorf("%s: Join() = %v, want an error naming the reservation", name, err)
		}
	}

	other := NewSystem(Prove, Sizes{})
	shards, _ := other.Shards([]ShardSpec{{}})
	if err := NewSystem(Prove, Sizes{}).Join(shards); err == nil {
		t.Error("Join took another system's shard")
	}
}

func TestShardsNeedAProveOnlySystemThatIsNotAShard(t *testing.T) {
	t.Parallel()
	for _, mode := range []Mode{Setup, Prove | Setup} {
		if _, err := NewSystem(mode, Sizes{}).Shards([]ShardSpec{{}}); err == nil {
			t.Errorf("mode %d: Shards succeeded; Setup mode is not sharded", mode)
		}
	}
	shards, err := NewSystem(Prove, Sizes{}).Shards([]ShardSpec{{}})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := shards[0].Shards([]ShardSpec{{}}); err == nil {
		t.Error("a shard was split again")
	}
	if _, err := NewSystem(Prove, Sizes{}).Shards([]ShardSpec{{Constraints: -1}}); err == nil {
		t.Error("a negative reservation was taken")
	}
	defer func() {
		if recover() == nil {
			t.Error("Import on a system that is not a shard did not panic")
		}
	}()
	NewSystem(Prove, Sizes{}).Import(&frOne)
}

// TestNewSystemMakesTheSameSlicesOnThreads: Sizes.Threads changes how the
// Prove-mode slices are made, not what they are.
func TestNewSystemMakesTheSameSlicesOnThreads(t *testing.T) {
	t.Parallel()
	for _, threads := range []int{0, 1, 4} {
		for _, mode := range []Mode{Prove, Setup, Prove | Setup} {
			cs := NewSystem(mode, Sizes{Constraints: 10, Domain: 16, Inputs: 3, Aux: 7, Threads: threads})
			wantEval := 0
			if mode&Prove != 0 {
				wantEval = 16
			}
			if len(cs.aux) != 0 || cap(cs.aux) != 7 || len(cs.a) != 0 || cap(cs.a) != wantEval || cap(cs.b) != wantEval || cap(cs.c) != wantEval {
				t.Errorf("threads %d, mode %d: aux %d/%d, evaluations %d/%d %d %d; want 0/7 and 0/%d",
					threads, mode, len(cs.aux), cap(cs.aux), len(cs.a), cap(cs.a), cap(cs.b), cap(cs.c), wantEval)
			}
		}
	}
}

// TestAPooledSystemIsTheFreshOneInTheLastOnesMemory: systems made from a
// Pool after a release are synthesized (sharded and sequentially) into
// the released memory and equal, bit for bit, a system made fresh, though
// the memory holds another chain's values and, past the constraints, what
// the quotient wrote there; TakeEvaluations still zeroes the tail. A set
// too small for the next system is not taken, and a Release without a
// Pool, or of a shard, gives nothing back.
func TestAPooledSystemIsTheFreshOneInTheLastOnesMemory(t *testing.T) {
	t.Parallel()
	seed := rand.Uint64()
	rng := rand.New(rand.NewPCG(seed, 2))
	const segments, steps, domain = 5, 12, 64
	n := 1 + segments*steps
	pool := NewPool()
	sizes := Sizes{Constraints: n, Domain: domain, Inputs: 2, Aux: n - 1, Pool: pool}
	var lastA *fr.Element
	for round := range 4 {
		s := newSquares(rng, segments, steps)
		var cs *System
		if round%2 == 0 {
			cs = s.sharded(t, sizes)
		} else {
			cs = s.sequential(sizes)
		}
		fresh := s.sequential(Sizes{Constraints: n, Domain: domain, Inputs: 2, Aux: n - 1})
		if err := SameSystem(fresh, cs); err != nil {
			t.Fatalf("seed %d, round %d: pooled system differs from a fresh one: %v", seed, round, err)
		}
		if round > 0 && &cs.a[0] != lastA {
			t.Errorf("round %d: A's evaluations are in new memory; want the released system's", round)
		}
		a, b, c, ok := cs.TakeEvaluations(domain)
		if !ok {
			t.Fatalf("round %d: TakeEvaluations(%d) refused a capacity of %d", round, domain, cap(cs.a))
		}
		for i := n; i < domain; i++ {
			if !a[i].IsZero() || !b[i].IsZero() || !c[i].IsZero() {
				t.Fatalf("seed %d, round %d: evaluation %d past the constraints is not zero", seed, round, i)
			}
		}
		for i := range a { // as the quotient does: h over A's memory
			a[i] = randValue(rng)
		}
		lastA = &a[0]
		cs.Release()
		if pool.Len() != 1 || cs.a != nil || cs.aux != nil {
			t.Fatalf("round %d: after Release the pool holds %d sets, the system still has %d evaluations and %d aux; want 1, 0 and 0",
				round, pool.Len(), len(cs.a), len(cs.aux))
		}
	}

	// A larger system does not take the smaller set.
	big := NewSystem(Prove, Sizes{Constraints: 2 * domain, Aux: n, Pool: pool})
	if pool.Len() != 1 || cap(big.a) != 2*domain {
		t.Errorf("a system of %d constraints from a pool of one %d-evaluation set: %d left in the pool, capacity %d; want 1 left and new memory",
			2*domain, domain, pool.Len(), cap(big.a))
	}

	// Without a Pool, and for a shard, Release gives nothing back.
	other := NewPool()
	plain := NewSystem(Prove, Sizes{Constraints: n, Aux: n})
	plain.Release()
	parent := NewSystem(Prove, Sizes{Constraints: n, Aux: n, Pool: other})
	shards, err := parent.Shards([]ShardSpec{{Constraints: 1, Aux: 1}})
	if err != nil {
		t.Fatal(err)
	}
	shards[0].Release()
	if cap(plain.a) != n || other.Len() != 0 {
		t.Errorf("Release without a pool left %d evaluations' room (want %d, untouched); a shard's put %d sets in its parent's pool (want 0)",
			cap(plain.a), n, other.Len())
	}
	parent.Release()
	if other.Len() != 1 {
		t.Errorf("the parent's release put %d sets in the pool; want 1", other.Len())
	}
}

// TestProveBytesCountsAuxAndTheEvaluationsOverTheDomain: 32 bytes an aux
// value and three evaluation vectors over the larger of the constraint
// count and the domain.
func TestProveBytesCountsAuxAndTheEvaluationsOverTheDomain(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		sizes Sizes
		want  int64
	}{
		{Sizes{Constraints: 10, Aux: 7}, (7 + 30) * 32},
		{Sizes{Constraints: 10, Domain: 16, Aux: 7}, (7 + 48) * 32},
		{Sizes{Constraints: 1 << 24, Domain: 1 << 25, Aux: 1 << 24}, (1<<24 + 3<<25) * 32},
	} {
		if got := c.sizes.ProveBytes(); got != c.want {
			t.Errorf("%+v: %d bytes, want %d", c.sizes, got, c.want)
		}
	}
}

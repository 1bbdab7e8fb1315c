package r1cs

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// A Mode says what a System keeps of the constraints it is given.
type Mode uint8

// The modes; they combine.
const (
	// Prove evaluates A, B and C of every constraint at the witness and
	// checks A·B = C.
	Prove Mode = 1 << iota
	// Setup records the constraint matrices.
	Setup
)

// A Matrix is one of A, B, C in compressed sparse rows: the entries of
// constraint i are Entries[RowStart[i]:RowStart[i+1]]. An Entry is a
// term's variable and the index of its coefficient in a table of the
// distinct coefficients that the System's three matrices share: 8 bytes
// a term where a Term takes 40. A circuit uses few distinct coefficients
// (the SHA-256 chain: 1, −1 and the powers of two that pack bits into
// words), so the matrices of a 2^24-constraint circuit take about a
// fifth of what Terms took (they were most of perfbot prove's 43 GB
// peak there).
type Matrix struct {
	RowStart []int
	Entries  []Entry
	coeffs   *coeffTable
}

// An Entry is one term of a Matrix row: Var with the coefficient
// Matrix.Coeff returns.
type Entry struct {
	Var   Variable
	Coeff uint32 // index in the System's coefficient table
}

// Row returns the entries of constraint i.
func (m *Matrix) Row(i int) []Entry { return m.Entries[m.RowStart[i]:m.RowStart[i+1]] }

// Coeff returns e's coefficient.
func (m *Matrix) Coeff(e Entry) *fr.Element { return &m.coeffs.values[e.Coeff] }

// Kind returns whether e's coefficient is 1, −1 or anything else.
func (m *Matrix) Kind(e Entry) CoeffKind {
	switch e.Coeff {
	case coeffOneIndex:
		return CoeffOne
	case coeffMinusOneIndex:
		return CoeffMinusOne
	}
	return CoeffGeneral
}

// Term returns e as a Term (with Kind One or MinusOne for a coefficient
// of 1 or −1, whatever kind the term was entered with).
func (m *Matrix) Term(e Entry) Term { return Term{Coeff: *m.Coeff(e), Var: e.Var, Kind: m.Kind(e)} }

// NumEntries returns the number of stored terms.
func (m *Matrix) NumEntries() int { return len(m.Entries) }

func (m *Matrix) appendRow(lc *LC) {
	if len(m.RowStart) == 0 {
		m.RowStart = append(m.RowStart, 0)
	}
	for i := range lc.Terms {
		m.Entries = append(m.Entries, Entry{Var: lc.Terms[i].Var, Coeff: m.coeffs.id(&lc.Terms[i])})
	}
	m.RowStart = append(m.RowStart, len(m.Entries))
}

// The coefficient table's first two entries.
const (
	coeffOneIndex      = 0
	coeffMinusOneIndex = 1
)

// A coeffTable numbers the distinct coefficients of a System's matrices.
type coeffTable struct {
	values []fr.Element
	index  map[fr.Element]uint32
}

func newCoeffTable() *coeffTable {
	t := &coeffTable{values: []fr.Element{frOne, frMinusOne}, index: make(map[fr.Element]uint32)}
	t.index[frOne], t.index[frMinusOne] = coeffOneIndex, coeffMinusOneIndex
	return t
}

// id returns the index of tm's coefficient, adding it when new.
func (t *coeffTable) id(tm *Term) uint32 {
	switch tm.Kind {
	case CoeffOne:
		return coeffOneIndex
	case CoeffMinusOne:
		return coeffMinusOneIndex
	}
	if i, ok := t.index[tm.Coeff]; ok {
		return i
	}
	if len(t.values) == math.MaxUint32 {
		panic("r1cs: more than 2^32 − 1 distinct coefficients")
	}
	i := uint32(len(t.values))
	t.values = append(t.values, tm.Coeff)
	t.index[tm.Coeff] = i
	return i
}

type frame struct {
	name  string
	index int // −1: no index
}

// An UnsatError reports the first constraint whose A·B ≠ C.
type UnsatError struct {
	Index      int    // constraint index, from 0
	Annotation string // namespace path and constraint name
}

func (e *UnsatError) Error() string {
	return fmt.Sprintf("constraint %d (%s) is not satisfied", e.Index, e.Annotation)
}

// A System is a rank-1 constraint system being synthesized.
type System struct {
	mode Mode

	inputs []fr.Element // inputs[0] = 1
	aux    []fr.Element

	n int // constraints so far

	// Prove mode: A, B, C evaluated at the witness, one per constraint.
	a, b, c []fr.Element
	unsat   *UnsatError

	// Setup mode: the matrices.
	ma, mb, mc Matrix

	scratch [3]LC
	// storage is how the scratch combinations keep their terms; inline
	// is their array under LCInline.
	storage LCStorage
	inline  [3][InlineTerms]Term
	path    []frame

	// pool takes the Prove-mode slices back on Release (Sizes.Pool);
	// taken holds A, B and C's once TakeEvaluations has handed them over.
	pool  *Pool
	taken *proveSlices

	// A shard's place in its parent (see Shards): nil and 0 for a
	// System that is not a shard.
	parent *System
	first  int       // the parent's index of the shard's first constraint
	spec   ShardSpec // what the shard reserved
}

// Sizes are capacity hints for a System, zero meaning grow as needed, and
// the storage of its scratch combinations.
type Sizes struct {
	Constraints, Inputs, Aux int
	// Domain, when larger than Constraints, is the capacity of the
	// Prove-mode evaluations: the prover's domain size, so that it can
	// lay A, B and C out over the domain in place (TakeEvaluations)
	// instead of copying them.
	Domain int
	// LCStorage is how the combinations Begin hands out keep their
	// terms; the zero value is LCHeap.
	LCStorage LCStorage
	// Pool, when not nil, gives a Prove-mode System the slices of one
	// that was released (System.Release) instead of new ones, and takes
	// them back when it is released in turn.
	Pool *Pool
	// Threads, above 1, has NewSystem make the Prove-mode slices (A, B
	// and C's evaluations and the aux values) on goroutines of their own,
	// at once. Go zeroes a large allocation that reuses freed memory on
	// the goroutine that makes it: at 2^24 constraints, over a 2^25
	// domain, 3.6 GB, which took 0.4 s on one core of a 2-core Xeon in a
	// test of the plain makes, about what the whole sharded synthesis
	// (see Shards) should take on 16 cores. 0 and 1 make them one after
	// the other, on the calling goroutine.
	Threads int
}

// ProveBytes returns the memory of a Prove-mode System of these sizes:
// its aux values and A, B and C's evaluations (over the domain when
// Domain is larger than Constraints), 32 bytes each.
func (s Sizes) ProveBytes() int64 {
	return int64(s.Aux+3*max(s.Constraints, s.Domain)) * fr.Bytes
}

// NewSystem returns an empty System in the given mode, holding only the
// input One.
func NewSystem(mode Mode, hint Sizes) *System {
	cs := &System{mode: mode, storage: hint.LCStorage}
	cs.inputs = make([]fr.Element, 1, max(1, hint.Inputs))
	cs.inputs[0].SetOne()
	if mode == Prove && hint.Pool != nil {
		cs.pool = hint.Pool
		if buf, ok := hint.Pool.take(hint.Aux, max(hint.Constraints, hint.Domain)); ok {
			cs.aux, cs.a, cs.b, cs.c = buf.aux, buf.a, buf.b, buf.c
			return cs
		}
	}
	if mode&Prove != 0 && hint.Threads > 1 {
		cs.makeProveSlices(hint)
	} else {
		cs.aux = make([]fr.Element, 0, hint.Aux)
		if mode&Prove != 0 {
			n := max(hint.Constraints, hint.Domain)
			cs.a = make([]fr.Element, 0, n)
			cs.b = make([]fr.Element, 0, n)
			cs.c = make([]fr.Element, 0, n)
		}
	}
	if mode&Setup != 0 {
		coeffs := newCoeffTable()
		for _, m := range []*Matrix{&cs.ma, &cs.mb, &cs.mc} {
			m.RowStart = make([]int, 1, hint.Constraints+1)
			m.coeffs = coeffs
		}
	}
	return cs
}

// makeProveSlices makes aux, a, b and c on four goroutines at once, so
// that the runtime zeroes them in parallel (Sizes.Threads).
func (cs *System) makeProveSlices(hint Sizes) {
	n := max(hint.Constraints, hint.Domain)
	var wg sync.WaitGroup
	wg.Go(func() { cs.aux = make([]fr.Element, 0, hint.Aux) })
	wg.Go(func() { cs.a = make([]fr.Element, 0, n) })
	wg.Go(func() { cs.b = make([]fr.Element, 0, n) })
	cs.c = make([]fr.Element, 0, n)
	wg.Wait()
}

// Mode returns the System's mode.
func (cs *System) Mode() Mode { return cs.mode }

// LCStorage returns how the System's scratch combinations keep their terms.
func (cs *System) LCStorage() LCStorage { return cs.storage }

// AllocInput adds a public input with the given value.
func (cs *System) AllocInput(value *fr.Element) Variable {
	cs.inputs = append(cs.inputs, *value)
	return InputVariable(len(cs.inputs) - 1)
}

// Alloc adds a private (aux) variable with the given value.
func (cs *System) Alloc(value *fr.Element) Variable {
	cs.aux = append(cs.aux, *value)
	return AuxVariable(len(cs.aux) - 1)
}

// AllocBit adds an aux variable whose value is 0 or 1. It does not constrain
// it to be boolean; that is the gadget's job.
func (cs *System) AllocBit(bit bool) Variable {
	var v fr.Element
	if bit {
		v.SetOne()
	}
	cs.aux = append(cs.aux, v)
	return AuxVariable(len(cs.aux) - 1)
}

// Value returns the witness value of v.
func (cs *System) Value(v Variable) fr.Element {
	if v.IsInput() {
		return cs.inputs[v.Index()]
	}
	return cs.aux[v.Index()]
}

// Begin returns the System's three scratch combinations, emptied, for the
// next Enforce. They stay valid until the next Begin. Where their terms
// live is the System's LCStorage: under LCHeap each keeps the heap slice it
// grew, under LCInline each starts again in the System's own array.
func (cs *System) Begin() (a, b, c *LC) {
	for i := range cs.scratch {
		if cs.storage == LCInline {
			cs.scratch[i].Terms = cs.inline[i][:0]
		} else {
			cs.scratch[i].Reset()
		}
	}
	return &cs.scratch[0], &cs.scratch[1], &cs.scratch[2]
}

// Enforce adds the constraint a·b = c, named name within the current
// namespace. It neither keeps nor modifies a, b and c.
func (cs *System) Enforce(name string, a, b, c *LC) {
	if cs.mode&Prove != 0 {
		va := evalTerms(a.Terms, cs.inputs, cs.aux)
		vb := evalTerms(b.Terms, cs.inputs, cs.aux)
		vc := evalTerms(c.Terms, cs.inputs, cs.aux)
		if cs.unsat == nil {
			var ab fr.Element
			ab.Mul(&va, &vb)
			if !ab.Equal(&vc) {
				cs.unsat = &UnsatError{Index: cs.first + cs.n, Annotation: cs.annotate(name)}
			}
		}
		cs.a = append(cs.a, va)
		cs.b = append(cs.b, vb)
		cs.c = append(cs.c, vc)
	}
	if cs.mode&Setup != 0 {
		cs.ma.appendRow(a)
		cs.mb.appendRow(b)
		cs.mc.appendRow(c)
	}
	cs.n++
}

// Push enters a namespace; index < 0 means the namespace has no index.
// Names should be constants: nothing is formatted unless a constraint fails.
func (cs *System) Push(name string, index int) { cs.path = append(cs.path, frame{name, index}) }

// Pop leaves the innermost namespace.
func (cs *System) Pop() { cs.path = cs.path[:len(cs.path)-1] }

func (cs *System) annotate(name string) string {
	var sb strings.Builder
	for _, f := range cs.path {
		sb.WriteString(f.name)
		if f.index >= 0 {
			sb.WriteByte('[')
			sb.WriteString(strconv.Itoa(f.index))
			sb.WriteByte(']')
		}
		sb.WriteByte('/')
	}
	sb.WriteString(name)
	return sb.String()
}

// Err returns the first unsatisfied constraint as an *UnsatError, or nil.
// Only a Prove-mode System checks satisfaction.
func (cs *System) Err() error {
	if cs.unsat == nil {
		return nil
	}
	return cs.unsat
}

// NumConstraints returns the number of constraints enforced so far.
func (cs *System) NumConstraints() int { return cs.n }

// NumInputs returns the number of inputs, One included.
func (cs *System) NumInputs() int { return len(cs.inputs) }

// NumAux returns the number of aux variables.
func (cs *System) NumAux() int { return len(cs.aux) }

// Inputs returns the input assignment (index 0 is One). The slice is the
// System's own.
func (cs *System) Inputs() []fr.Element { return cs.inputs }

// Aux returns the aux assignment. The slice is the System's own.
func (cs *System) Aux() []fr.Element { return cs.aux }

// TakeEvaluations hands the evaluations of A, B and C over to the
// caller, each extended to n entries with zeros after the constraints,
// when their capacity allows (Sizes.Domain ≥ n): no copy is made. The
// System keeps none of them after (Evaluations returns nil), since the
// caller may overwrite them. ok is false, and nothing is handed over,
// when the capacity is short of n or n is below the constraint count.
func (cs *System) TakeEvaluations(n int) (a, b, c []fr.Element, ok bool) {
	m := len(cs.a)
	if n < m || cap(cs.a) < n || cap(cs.b) < n || cap(cs.c) < n {
		return nil, nil, nil, false
	}
	a, b, c = cs.a[:n], cs.b[:n], cs.c[:n]
	clear(a[m:]) // zero already unless the memory was written past len (a pooled slice was)
	clear(b[m:])
	clear(c[m:])
	if cs.pool != nil {
		cs.taken = &proveSlices{a: a, b: b, c: c}
	}
	cs.a, cs.b, cs.c = nil, nil, nil
	return a, b, c, true
}

// Release gives the System's Prove-mode slices (its aux values and A, B
// and C's evaluations, also those TakeEvaluations handed over) back to
// the Pool it was made with, for the next System; without a Pool it does
// nothing. Nothing may read the System, or the slices it handed over,
// after: the next System overwrites them. A shard is released with its
// parent, not on its own.
func (cs *System) Release() {
	if cs.pool == nil || cs.parent != nil {
		return
	}
	buf := proveSlices{aux: cs.aux, a: cs.a, b: cs.b, c: cs.c}
	if cs.taken != nil {
		buf.a, buf.b, buf.c = cs.taken.a, cs.taken.b, cs.taken.c
	}
	cs.pool.put(buf)
	cs.pool, cs.taken = nil, nil
	cs.aux, cs.a, cs.b, cs.c = nil, nil, nil, nil
}

// A Pool keeps the Prove-mode slices of released Systems (Sizes.Pool) so
// that proving the same circuit again writes its witness and evaluations
// into memory already mapped: at 2^24 constraints over a 2^25 domain they
// are 3.6 GB a proof, which Go zeroes when it makes them and the kernel
// faults in page by page where Go had returned them to it. A Pool holds
// what was released and not taken again: as many sets as Systems were
// alive at once. Its methods are safe for concurrent use.
type Pool struct {
	mu   sync.Mutex
	free []proveSlices
}

// proveSlices are a Prove-mode System's slices.
type proveSlices struct{ aux, a, b, c []fr.Element }

// NewPool returns an empty Pool.
func NewPool() *Pool { return &Pool{} }

// take returns a released set whose capacities hold aux values and n
// evaluations, emptied (length 0), and removes it from the pool.
func (p *Pool) take(aux, n int) (proveSlices, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for i, buf := range p.free {
		if cap(buf.aux) >= aux && cap(buf.a) >= n && cap(buf.b) >= n && cap(buf.c) >= n {
			p.free = slices.Delete(p.free, i, i+1)
			return proveSlices{aux: buf.aux[:0], a: buf.a[:0], b: buf.b[:0], c: buf.c[:0]}, true
		}
	}
	return proveSlices{}, false
}

// put adds a released set.
func (p *Pool) put(buf proveSlices) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.free = append(p.free, buf)
}

// Len returns how many released sets the pool holds.
func (p *Pool) Len() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.free)
}

// Evaluations returns A, B and C evaluated at the witness, one element per
// constraint (Prove mode). The slices are the System's own.
func (cs *System) Evaluations() (a, b, c []fr.Element) { return cs.a, cs.b, cs.c }

// Matrices returns the constraint matrices (Setup mode). They are the
// System's own.
func (cs *System) Matrices() (a, b, c *Matrix) { return &cs.ma, &cs.mb, &cs.mc }

// IsSatisfied checks every recorded constraint against the assignment; it
// needs Setup mode. It returns the first failure as an *UnsatError, without
// an annotation (names are not recorded).
func (cs *System) IsSatisfied() error {
	if cs.mode&Setup == 0 {
		return fmt.Errorf("r1cs: IsSatisfied needs a Setup-mode system")
	}
	for i := 0; i < cs.n; i++ {
		va := cs.ma.eval(i, cs.inputs, cs.aux)
		vb := cs.mb.eval(i, cs.inputs, cs.aux)
		vc := cs.mc.eval(i, cs.inputs, cs.aux)
		va.Mul(&va, &vb)
		if !va.Equal(&vc) {
			return &UnsatError{Index: i, Annotation: "(unrecorded)"}
		}
	}
	return nil
}

// eval returns row i of m at the assignment.
func (m *Matrix) eval(i int, inputs, aux []fr.Element) fr.Element {
	var sum, t fr.Element
	for _, e := range m.Row(i) {
		var w *fr.Element
		if e.Var.IsInput() {
			w = &inputs[e.Var.Index()]
		} else {
			w = &aux[e.Var.Index()]
		}
		switch e.Coeff {
		case coeffOneIndex:
			sum.Add(&sum, w)
		case coeffMinusOneIndex:
			sum.Sub(&sum, w)
		default:
			t.Mul(m.Coeff(e), w)
			sum.Add(&sum, &t)
		}
	}
	return sum
}

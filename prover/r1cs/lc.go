package r1cs

import (
	"fmt"
	"strings"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// A Variable names one entry of the assignment: an input (public) or an aux
// (private) variable. Input 0 is the constant One.
type Variable uint32

const inputFlag = 1 << 31

// One is the input variable fixed to the constant 1.
const One = Variable(inputFlag)

// InputVariable returns the variable for input index i.
func InputVariable(i int) Variable { return Variable(uint32(i) | inputFlag) }

// AuxVariable returns the variable for aux index i.
func AuxVariable(i int) Variable { return Variable(uint32(i)) }

// IsInput reports whether v is an input (public) variable.
func (v Variable) IsInput() bool { return v&inputFlag != 0 }

// Index returns v's position among the inputs or among the aux variables.
func (v Variable) Index() int { return int(v &^ inputFlag) }

// String returns "in3" or "aux17".
func (v Variable) String() string {
	if v.IsInput() {
		return fmt.Sprintf("in%d", v.Index())
	}
	return fmt.Sprintf("aux%d", v.Index())
}

// A CoeffKind says whether a term's coefficient is 1, −1 or anything else, so
// evaluation can skip a field multiplication for the common cases.
type CoeffKind uint8

// The coefficient kinds.
const (
	CoeffGeneral CoeffKind = iota
	CoeffOne
	CoeffMinusOne
)

// A Term is Coeff·Var.
type Term struct {
	Coeff fr.Element
	Var   Variable
	Kind  CoeffKind
}

var (
	frOne      fr.Element
	frMinusOne fr.Element
)

func init() {
	frOne.SetOne()
	frMinusOne.Neg(&frOne)
}

// An LC is a sparse linear combination Σ coeff·var. The zero value is the
// empty combination. Terms with the same variable may repeat; they add.
type LC struct {
	Terms []Term
}

// An LCStorage is how a System's scratch combinations (Begin) keep their
// terms: the perfbot prove --lc-storage switch, which compares the two
// storages of the seed (Vec and SmallVec) inside one build. Both give
// the same constraints and witness; only where the terms live differs.
type LCStorage uint8

// The storages.
const (
	// LCHeap keeps each scratch combination's terms in a heap slice that
	// grows to the longest combination seen and is reused by every later
	// constraint (a Vec cleared, not dropped): once grown, synthesis
	// allocates nothing for its combinations. The default.
	LCHeap LCStorage = iota
	// LCInline starts each constraint's scratch combinations in an array
	// of InlineTerms terms inside the System; one that outgrows it spills
	// to a new heap slice, dropped at the next Begin (a SmallVec made
	// fresh for every constraint, as bellperson makes its combinations).
	// Short combinations never touch the heap; every longer one allocates
	// as it grows.
	LCInline
)

// InlineTerms is how many terms a combination holds inline under
// LCInline. The SHA-256 chain's combinations have at most 4 terms but for
// its packed word sums (33 to 193 terms, 0.7% of the combinations at
// 2^16 constraints), which spill.
const InlineTerms = 8

// LCStorages are the storages' names, as ParseLCStorage takes them; the
// first is the default.
var LCStorages = []string{"heap", "inline"}

// String returns the storage's name: "heap" or "inline".
func (s LCStorage) String() string {
	if int(s) < len(LCStorages) {
		return LCStorages[s]
	}
	return fmt.Sprintf("LCStorage(%d)", uint8(s))
}

// ParseLCStorage returns the storage named name ("heap" or "inline").
func ParseLCStorage(name string) (LCStorage, error) {
	for i, n := range LCStorages {
		if name == n {
			return LCStorage(i), nil
		}
	}
	return 0, fmt.Errorf("unknown LC storage %q: allowed values are %s", name, strings.Join(LCStorages, ", "))
}

// Reset empties lc and keeps its storage.
func (lc *LC) Reset() { lc.Terms = lc.Terms[:0] }

// Len returns the number of terms.
func (lc *LC) Len() int { return len(lc.Terms) }

// Add adds coeff·v.
func (lc *LC) Add(v Variable, coeff *fr.Element) {
	kind := CoeffGeneral
	switch {
	case coeff.IsOne():
		kind = CoeffOne
	case coeff.Equal(&frMinusOne):
		kind = CoeffMinusOne
	}
	lc.Terms = append(lc.Terms, Term{Coeff: *coeff, Var: v, Kind: kind})
}

// AddVar adds v with coefficient 1.
func (lc *LC) AddVar(v Variable) {
	lc.Terms = append(lc.Terms, Term{Coeff: frOne, Var: v, Kind: CoeffOne})
}

// SubVar adds v with coefficient −1.
func (lc *LC) SubVar(v Variable) {
	lc.Terms = append(lc.Terms, Term{Coeff: frMinusOne, Var: v, Kind: CoeffMinusOne})
}

// AddConst adds the constant c (as c·One).
func (lc *LC) AddConst(c *fr.Element) { lc.Add(One, c) }

// AddScaled adds coeff·o term by term.
func (lc *LC) AddScaled(o *LC, coeff *fr.Element) {
	if coeff.IsOne() {
		lc.Terms = append(lc.Terms, o.Terms...)
		return
	}
	var c fr.Element
	for i := range o.Terms {
		c.Mul(&o.Terms[i].Coeff, coeff)
		lc.Add(o.Terms[i].Var, &c)
	}
}

// Eval returns Σ coeff·value(var) with the given assignment.
func (lc *LC) Eval(inputs, aux []fr.Element) fr.Element {
	return evalTerms(lc.Terms, inputs, aux)
}

func evalTerms(terms []Term, inputs, aux []fr.Element) fr.Element {
	var sum, t fr.Element
	for i := range terms {
		tm := &terms[i]
		var w *fr.Element
		if tm.Var.IsInput() {
			w = &inputs[tm.Var.Index()]
		} else {
			w = &aux[tm.Var.Index()]
		}
		if w.IsZero() {
			continue
		}
		switch tm.Kind {
		case CoeffOne:
			sum.Add(&sum, w)
		case CoeffMinusOne:
			sum.Sub(&sum, w)
		default:
			if w.IsOne() {
				sum.Add(&sum, &tm.Coeff)
			} else {
				t.Mul(&tm.Coeff, w)
				sum.Add(&sum, &t)
			}
		}
	}
	return sum
}

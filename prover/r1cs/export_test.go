package r1cs

import (
	"fmt"
	"slices"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// SameSystem returns an error naming the first difference between x and
// y: counts, assignment, evaluations (Prove mode) or matrices (Setup
// mode), or nil when they are the same constraint system and witness. It
// is exported for the package's external tests.
func SameSystem(x, y *System) error {
	if x.mode != y.mode {
		return fmt.Errorf("modes %d and %d", x.mode, y.mode)
	}
	if x.n != y.n || len(x.inputs) != len(y.inputs) || len(x.aux) != len(y.aux) {
		return fmt.Errorf("%d constraints, %d inputs, %d aux vs %d, %d, %d",
			x.n, len(x.inputs), len(x.aux), y.n, len(y.inputs), len(y.aux))
	}
	for _, v := range []struct {
		name string
		x, y []fr.Element
	}{
		{"inputs", x.inputs, y.inputs}, {"aux", x.aux, y.aux},
		{"A evaluations", x.a, y.a}, {"B evaluations", x.b, y.b}, {"C evaluations", x.c, y.c},
	} {
		if i := firstDiff(v.x, v.y); i >= 0 {
			return fmt.Errorf("%s differ at %d", v.name, i)
		}
	}
	for _, m := range []struct {
		name string
		x, y *Matrix
	}{{"A", &x.ma, &y.ma}, {"B", &x.mb, &y.mb}, {"C", &x.mc, &y.mc}} {
		if !slices.Equal(m.x.RowStart, m.y.RowStart) {
			return fmt.Errorf("matrix %s: rows differ", m.name)
		}
		tx, ty := allTerms(m.x), allTerms(m.y)
		if i := firstDiff(tx, ty); i >= 0 {
			return fmt.Errorf("matrix %s: term %d differs: %+v vs %+v", m.name, i, tx[i], ty[i])
		}
	}
	if (x.unsat == nil) != (y.unsat == nil) || x.unsat != nil && *x.unsat != *y.unsat {
		return fmt.Errorf("satisfaction differs: %v vs %v", x.Err(), y.Err())
	}
	return nil
}

func firstDiff[T comparable](x, y []T) int {
	if len(x) != len(y) {
		return min(len(x), len(y))
	}
	for i := range x {
		if x[i] != y[i] {
			return i
		}
	}
	return -1
}

// allTerms returns m's entries as Terms, row after row.
func allTerms(m *Matrix) []Term {
	ts := make([]Term, len(m.Entries))
	for i, e := range m.Entries {
		ts[i] = m.Term(e)
	}
	return ts
}

// rowTerms returns row i of m as Terms.
func rowTerms(m *Matrix, i int) []Term {
	return allTerms(&Matrix{Entries: m.Row(i), coeffs: m.coeffs})
}

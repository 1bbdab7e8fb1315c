package stats

import (
	"cmp"
	"slices"
)

// Holm returns the Holm–Bonferroni adjusted p-values of p, in p's order.
// With the m p-values sorted ascending, the k-th smallest (k from 1) is
// multiplied by m−k+1, capped at 1, and raised to the largest adjusted
// value before it, so adjusted values keep the raw values' order.
// Rejecting every hypothesis whose adjusted p is below α controls the
// chance of any false positive in the family at α, under any dependence
// between the tests.
func Holm(p []float64) []float64 {
	m := len(p)
	order := make([]int, m)
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(p[a], p[b]) })
	adj := make([]float64, m)
	running := 0.0
	for k, i := range order {
		v := min(1, float64(m-k)*p[i])
		running = max(running, v)
		adj[i] = running
	}
	return adj
}

package stats

import (
	"math"
	"testing"
)

func TestHolmAdjustsByRankAndKeepsOrder(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		p, adj []float64
	}{
		// Sorted: 0.01 (rank 1, ×3 = 0.03), 0.03 (rank 2, ×2 = 0.06),
		// 0.04 (rank 3, ×1 = 0.04, raised to the running max 0.06).
		{"hand-computed", []float64{0.01, 0.04, 0.03}, []float64{0.03, 0.06, 0.06}},
		// Sorted: 0.001 ×4 = 0.004, 0.02 ×3 = 0.06, 0.5 ×2 = 1 (capped),
		// 0.9 ×1 = 0.9 raised to 1.
		{"capped at 1", []float64{0.5, 0.001, 0.9, 0.02}, []float64{1, 0.004, 1, 0.06}},
		// Ties keep their order; 0.02 ×3 = 0.06, 0.02 ×2 = 0.04 → 0.06.
		{"ties", []float64{0.02, 0.02, 0.3}, []float64{0.06, 0.06, 0.3}},
		{"one test is not adjusted", []float64{0.0123}, []float64{0.0123}},
		{"no tests", nil, []float64{}},
	}
	for _, c := range cases {
		got := Holm(c.p)
		if len(got) != len(c.adj) {
			t.Errorf("%s: Holm(%v) = %v, want %v", c.name, c.p, got, c.adj)
			continue
		}
		for i := range got {
			if math.Abs(got[i]-c.adj[i]) > 1e-12 {
				t.Errorf("%s: Holm(%v) = %v, want %v", c.name, c.p, got, c.adj)
				break
			}
		}
	}
}

func TestHolmDoesNotModifyItsInput(t *testing.T) {
	t.Parallel()
	p := []float64{0.04, 0.01}
	Holm(p)
	if p[0] != 0.04 || p[1] != 0.01 {
		t.Errorf("input changed to %v", p)
	}
}

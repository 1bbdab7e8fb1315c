package stats

import (
	"math"
	"testing"
)

func TestClopperPearson(t *testing.T) {
	// 0 of 120: the upper bound is 1 − 0.025^(1/120) ≈ 0.0303.
	if _, hi := ClopperPearson(0, 120, 0.95); math.Abs(hi-0.0303) > 0.0002 {
		t.Errorf("0 of 120: upper bound %.4f, want 0.0303", hi)
	}
	// 5 of 100: [0.0164, 0.1128].
	if lo, hi := ClopperPearson(5, 100, 0.95); math.Abs(lo-0.0164) > 0.0003 || math.Abs(hi-0.1128) > 0.0003 {
		t.Errorf("5 of 100: [%.4f, %.4f], want [0.0164, 0.1128]", lo, hi)
	}
}

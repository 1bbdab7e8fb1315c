package analysis

import (
	"testing"

	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

// One scale per row, from both values: the "70799.700µs" base
// beside a "5.096µs" head.
func TestScalerShowsBothValuesOfARowInOneScale(t *testing.T) {
	for _, c := range []struct {
		unit string
		vals []float64
		want []string
	}{
		{"sec/op", []float64{0.0707997, 5.096e-6}, []string{"70.7997ms", "0.0051ms"}},
		{"sec/op", []float64{0.1009981, 0.0001}, []string{"101.00ms", "0.10ms"}},
		{"sec/op", []float64{0.5527, 0.6226}, []string{"552.7ms", "622.6ms"}},
		{"sec/op", []float64{0.0998, 0.09985}, []string{"99.80ms", "99.85ms"}},
		{"B/op", []float64{3 << 20, 512}, []string{"3.0000Mi", "0.0005Mi"}},
		{"allocs/op", []float64{0, 12}, []string{"0.00", "12.00"}},
	} {
		s := fmtx.Scaler(c.unit, c.vals...)
		for i, v := range c.vals {
			if got := fmtx.FormatScaled(s, v, c.unit); got != c.want[i] {
				t.Errorf("%s %v: value %d formats as %q, want %q", c.unit, c.vals, i, got, c.want[i])
			}
		}
	}
}

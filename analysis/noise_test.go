package analysis

import (
	"math"
	"testing"
)

func TestMeasureNoiseKnownValues(t *testing.T) {
	t.Parallel()
	k := Key{Benchmark: "B", Phase: "p", Unit: "sec/op"}
	vals := []float64{9, 10, 11, 10, 10}
	var runs []Run
	for _, v := range vals {
		runs = append(runs, Run{Status: StatusOK, Samples: []Sample{{Key: k, Value: v}}})
	}
	runs = append(runs, Run{Status: StatusCrashed, Samples: []Sample{{Key: k, Value: 1000}}})
	got := MeasureNoise(runs, 10, Options{})
	if len(got) != 1 {
		t.Fatalf("got %d rows, want 1", len(got))
	}
	n := got[0]
	// mean 10, sample stddev sqrt(2/4) = 0.7071 → CV 7.071%.
	if n.N != 5 || n.Median != 10 || math.Abs(n.CVPct-7.0711) > 1e-3 {
		t.Errorf("N=%d median=%v CV=%v; want 5, 10, 7.071", n.N, n.Median, n.CVPct)
	}
	// deviations 1,0,1,0,0 → MAD 0.
	if n.MADPct != 0 {
		t.Errorf("MAD = %v, want 0", n.MADPct)
	}
	// (1.95996 + 0.84162) · √(2/10) · 7.0711 · √(π/3) = 2.80158 · 0.44721 · 7.0711 · 1.02333 = 9.0661
	if math.Abs(n.DetectablePct-9.0661) > 1e-3 {
		t.Errorf("DetectablePct = %v, want 9.0661", n.DetectablePct)
	}
}

func TestMeasureNoiseDetectableShrinksWithMoreRuns(t *testing.T) {
	t.Parallel()
	k := Key{Benchmark: "B", Unit: "sec/op"}
	runs := []Run{
		{Status: StatusOK, Samples: []Sample{{Key: k, Value: 1}, {Key: k, Value: 3}}}, // median 2
		{Status: StatusOK, Samples: []Sample{{Key: k, Value: 2.2}}},
		{Status: StatusOK, Samples: []Sample{{Key: k, Value: 1.8}}},
	}
	a := MeasureNoise(runs, 5, Options{})[0]
	b := MeasureNoise(runs, 20, Options{})[0]
	if a.Median != 2 || !(b.DetectablePct < a.DetectablePct) || math.Abs(a.DetectablePct/b.DetectablePct-2) > 1e-9 {
		t.Errorf("median %v, detectable at 5 runs %v and 20 runs %v: want 2 and a halving", a.Median, a.DetectablePct, b.DetectablePct)
	}
}

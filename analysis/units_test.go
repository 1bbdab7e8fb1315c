package analysis

import "testing"

func TestHigherIsBetterForRatesOnly(t *testing.T) {
	t.Parallel()
	cases := map[string]bool{
		// Costs: lower is better (benchfmt's GetBetter agrees for the
		// units it knows).
		"sec/op": false, "ns/op": false, "B/op": false, "allocs/op": false,
		"instructions/op": false, "page-faults/op": false, "cache-misses/op": false, "sec": false,
		// Rates: higher is better.
		"B/s": true, "MB/s": true, "constraints/s": true, "ops/sec": true, "points/ns": true,
		// Not a time in the denominator.
		"J/op": false, "s/op": false,
		// GPU telemetry: clocks are better higher; energy, power and
		// temperature are costs.
		"gpu-sm-clock-mean-MHz/run": true, "gpu-sm-clock-min-MHz/run": true, "gpu-mem-clock-min-MHz/run": true,
		"gpu-energy-J/run": false, "gpu-power-mean-W/run": false, "gpu-temp-max-C/run": false,
	}
	for unit, want := range cases {
		if got := HigherIsBetter(unit); got != want {
			t.Errorf("HigherIsBetter(%q) = %v, want %v", unit, got, want)
		}
	}
	opts := Options{HigherBetterUnits: []string{"ipc"}}
	if !opts.higherIsBetter("ipc") || !opts.higherIsBetter("B/s") || opts.higherIsBetter("sec/op") {
		t.Error("Options.HigherBetterUnits does not extend the rule")
	}
}

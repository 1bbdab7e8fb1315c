package analysis

import (
	"os"
	"testing"

	"github.com/perfbot/perfbot/analysis/stats"
)

// TestSequentialTradeoff is a measurement, not a check: it prints, for the
// default design and the levers a maintainer can set (α, max_count), the
// simulated A/A false-alarm rate and how often a planted +5% msm_h is
// found, in the lognormal and heavy-tailed worlds of the simulation test.
// It answers "what would α = 0.025 or a cap of 60 cost or buy" before a
// default changes. It takes a few minutes on two cores, so it runs only
// with PERFBOT_SIM_TRADEOFF=1 (make bench-tradeoff; BENCHMARKS.md has its figures).
func TestSequentialTradeoff(t *testing.T) {
	if os.Getenv("PERFBOT_SIM_TRADEOFF") == "" {
		t.Skip("a measurement of several minutes: set PERFBOT_SIM_TRADEOFF=1 to run it")
	}
	const n = 600
	const planted = 6 // msm_h
	for _, c := range []struct {
		alpha float64
		max   int
	}{{0.05, 30}, {0.025, 30}, {0.01, 30}, {0.05, 60}, {0.025, 60}, {0.01, 60}} {
		d := stats.NewDesign(10, c.max)
		opts := DefaultOptions()
		opts.Alpha = c.alpha
		for wi, w := range simWorlds[:2] {
			alarms := tallyOutcomes(simulateMany(uint64(500+wi), n, w, planted, 1, d, opts)).alarms
			tl := tallyOutcomes(simulateMany(uint64(600+wi), n, w, planted, 1.05, d, opts))
			found, wrong, rounds := tl.found, tl.wrong, 0
			for _, r := range tl.rounds {
				rounds += r
			}
			lo, hi := stats.ClopperPearson(alarms, n, 0.95)
			t.Logf("α %.3f cap %d %-12s A/A %3d of %d (%.1f%%, 95%% CI %.1f–%.1f%%); +5%% msm_h found %3d of %d (%.1f%%), wrong %d, mean rounds %.1f",
				c.alpha, c.max, w.name, alarms, n, 100*float64(alarms)/n, 100*lo, 100*hi, found, n, 100*float64(found)/n, wrong, float64(rounds)/n)
		}
	}
}

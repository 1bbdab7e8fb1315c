//go:build perfbot_test_hooks

package prover

import (
	"testing"
	"time"
)

// A test build plants what its environment says, in the phase it names
// and nowhere else: synthesis, and the host's G2 MSM beside the G1 MSMs.
// make test runs this with -tags perfbot_test_hooks.
func TestTestBuildPlantsWhereItsEnvironmentSays(t *testing.T) {
	prove, _ := plantedFixture(t, newMeter(), 1<<10)
	phase := func(ms []Measurement, name string) time.Duration {
		for _, m := range ms {
			if m.Phase == name {
				return m.Elapsed
			}
		}
		t.Fatalf("no %s phase", name)
		return 0
	}
	// The fastest of three proofs each way: the plant is a floor.
	fastest := func(name string) time.Duration {
		best := time.Duration(1 << 62)
		for range 3 {
			best = min(best, phase(prove(nil), name))
		}
		return best
	}
	synth, g2 := fastest(PhaseSynthesis), fastest(PhaseMSMB2)
	const plant = 200 * time.Millisecond
	t.Setenv("PERFBOT_TEST_SPIN_SYNTHESIS", "200000000")
	if got := fastest(PhaseSynthesis); got < synth+plant*9/10 {
		t.Errorf("synthesis %v with a %v plant, %v without", got, plant, synth)
	}
	if got := fastest(PhaseMSMB2); got > g2+plant/2 {
		t.Errorf("msm_b2 %v with synthesis's plant, %v without: the plant leaked", got, g2)
	}
	t.Setenv("PERFBOT_TEST_SPIN_SYNTHESIS", "")
	t.Setenv("PERFBOT_TEST_SPIN_G2", "200000000")
	if got := fastest(PhaseMSMB2); got < g2+plant*9/10 {
		t.Errorf("msm_b2 %v with a %v plant, %v without", got, plant, g2)
	}
	if got := fastest(PhaseSynthesis); got > synth+plant/2 {
		t.Errorf("synthesis %v with msm_b2's plant, %v without: the plant leaked", got, synth)
	}
}

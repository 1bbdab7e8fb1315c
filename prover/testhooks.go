//go:build perfbot_test_hooks

package prover

import (
	"os"
	"strconv"
	"time"
)

// A test build (go build -tags perfbot_test_hooks) plants slowdowns where
// its environment says, so that perfbot's comparisons can be checked on
// known changes (bench/plant-msm.sh sets them):
//
//	PERFBOT_TEST_SPIN_SYNTHESIS=NS  NS nanoseconds more in synthesis
//	PERFBOT_TEST_SPIN_G2=NS         NS nanoseconds more in the host's G2
//	                                MSM (msm_b2), beside the device's
//	                                G1 MSMs: on the critical path where
//	                                it is the longer branch
//
// Each is a spin of the phase's own goroutine on the CPU. A build without
// the tag has neither (testhooks_off.go).
func testSpinSynthesis() time.Duration { return spinFromEnv("PERFBOT_TEST_SPIN_SYNTHESIS") }
func testSpinG2() time.Duration        { return spinFromEnv("PERFBOT_TEST_SPIN_G2") }

func spinFromEnv(key string) time.Duration {
	ns, err := strconv.ParseInt(os.Getenv(key), 10, 64)
	if err != nil || ns < 0 {
		return 0
	}
	return time.Duration(ns)
}

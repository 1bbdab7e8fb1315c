//go:build !perfbot_test_hooks

package prover

import "time"

// Without the perfbot_test_hooks build tag nothing is planted
// (testhooks.go says what a test build plants).
func testSpinSynthesis() time.Duration { return 0 }
func testSpinG2() time.Duration        { return 0 }

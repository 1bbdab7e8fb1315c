package bench

import (
	"os/exec"
	"strings"
	"testing"
)

// TestPlantMSMTakesTheFlagOutAndExportsIt runs bench/plant-msm.sh with a
// real shell as the program: --plant-msm POINTS:NS, wherever it stands
// among the arguments, becomes PERFBOT_TEST_SPIN_MSM and leaves the other
// arguments as they were (spaces kept); without it nothing is set; a bad
// value is refused with exit 2 and what to write. --plant-synthesis and
// --plant-g2 NS become PERFBOT_TEST_SPIN_SYNTHESIS and _G2 likewise.
func TestPlantMSMTakesTheFlagOutAndExportsIt(t *testing.T) {
	t.Parallel()
	show := []string{"plant-msm.sh", "/bin/sh", "-c", `printf '%s|%s|%s\n' "${PERFBOT_TEST_SPIN_MSM-unset}" "$#" "$*"`, "sh"}
	showAll := []string{"plant-msm.sh", "/bin/sh", "-c",
		`printf '%s|%s|%s|%s\n' "${PERFBOT_TEST_SPIN_MSM-unset}" "${PERFBOT_TEST_SPIN_SYNTHESIS-unset}" "${PERFBOT_TEST_SPIN_G2-unset}" "$*"`, "sh"}
	runWith := func(show []string, args ...string) (string, int) {
		cmd := exec.Command("sh", append(show, args...)...)
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return strings.TrimSpace(string(out)), code
	}
	run := func(args ...string) (string, int) { return runWith(show, args...) }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--quiet", "a b", "--plant-msm", "2097151:1250000", "--cpuprofile", "f"}, "2097151:1250000|4|--quiet a b --cpuprofile f"},
		{[]string{"--plant-msm", "7:9"}, "7:9|0|"},
		{[]string{"--quiet", "x"}, "unset|2|--quiet x"},
	} {
		if got, code := run(c.args...); got != c.want || code != 0 {
			t.Errorf("plant-msm.sh %q: %q (exit %d), want %q", c.args, got, code, c.want)
		}
	}
	for _, bad := range []string{"7x", "79", ":9", "7:", "7:9:1"} {
		got, code := run("--plant-msm", bad)
		if code != 2 || !strings.Contains(got, "want POINTS:NS, e.g. 2097151:1250000") {
			t.Errorf("--plant-msm %s: %q (exit %d), want exit 2 and what to write", bad, got, code)
		}
	}
	if got, code := run("--plant-msm"); code != 2 || !strings.Contains(got, "--plant-msm needs a value") {
		t.Errorf("--plant-msm without a value: %q (exit %d)", got, code)
	}
	// The test build's host plants, beside the device's.
	if got, code := runWith(showAll, "--plant-synthesis", "13000000", "--quiet", "--plant-g2", "5"); code != 0 || got != "unset|13000000|5|--quiet" {
		t.Errorf("host plants: %q (exit %d)", got, code)
	}
	for _, bad := range []string{"", "1e6", "-5", "5ms"} {
		if got, code := runWith(showAll, "--plant-synthesis", bad); code != 2 || !strings.Contains(got, "want nanoseconds") {
			t.Errorf("--plant-synthesis %q: %q (exit %d), want exit 2 and what to write", bad, got, code)
		}
	}
}

package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/runner/system"
)

func TestSystemJSONDecodesWithEveryFinding(t *testing.T) {
	t.Parallel()
	out, errOut, code := perfbot(t, "system", "--format", "json", "--interval", "200ms")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	var r system.Report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("output is not a report: %v\n%s", err, out)
	}
	names := map[string]bool{}
	for _, f := range r.Findings {
		names[f.Name] = true
	}
	for _, want := range []string{"cpu-governor", "aslr", "load", "busy-processes", "swap", "thp"} {
		if !names[want] {
			t.Errorf("no %s finding in %+v", want, r.Findings)
		}
	}
	if r.CPUs < 1 || r.NVML.Name != "nvml" || r.GPUs == nil || r.Processes == nil {
		t.Errorf("report %+v", r)
	}
}

func TestSystemTextShowsFindingsAndGPUs(t *testing.T) {
	t.Parallel()
	out, errOut, code := perfbot(t, "system", "--interval", "100ms")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	for _, want := range []string{"NAME                 STATUS   STATE\n", "\naslr ", "\nBusiest other processes over ", "\nGPUs (NVML):\nnvml "} {
		if !strings.Contains(out, want) {
			t.Errorf("text has no %q:\n%s", want, out)
		}
	}
}

func TestSystemRejectsBadFlags(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"system", "--format", "xml"}, `unknown --format "xml": allowed values are text, json`},
		{[]string{"system", "--interval", "0s"}, `--interval 0s: must be positive`},
		{[]string{"system", "extra"}, `takes no arguments`},
	} {
		out, errOut, code := perfbot(t, tc.args...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "--help' for usage") || out != "" {
			t.Errorf("%v: exit %d, stdout %q, stderr %q; want exit 2 and %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

func TestSystemHelpMatchesGolden(t *testing.T) {
	t.Parallel()
	out, errOut, code := perfbot(t, "system", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "help-system", out)
}

package prover

import (
	"strings"
	"testing"
)

func TestParseConstraintsAcceptsDecimalAndPowersOfTwo(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{
		"65536": 65536, "2^16": 65536, " 2^0 ": 1, "1": 1, "100000": 100000,
		"2^28": 1 << 28, "268435456": 1 << 28,
	} {
		got, err := ParseConstraints(in)
		if err != nil || got != want {
			t.Errorf("ParseConstraints(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
}

func TestParseConstraintsRejectsBadInputWithAReason(t *testing.T) {
	t.Parallel()
	for in, reason := range map[string]string{
		"0":                    "must be positive",
		"-5":                   "must be positive",
		"abc":                  "not a number",
		"":                     "not a number",
		"2^29":                 "too large",
		"268435457":            "too large",
		"99999999999999999999": "too large",
		"3^4":                  "only powers of two",
		"2^x":                  "exponent",
		"1e6":                  "not a number",
	} {
		_, err := ParseConstraints(in)
		if err == nil {
			t.Errorf("ParseConstraints(%q) succeeded; want an error", in)
			continue
		}
		if !strings.Contains(err.Error(), reason) || !strings.Contains(err.Error(), "2^16") {
			t.Errorf("ParseConstraints(%q) = %v; want it to say %q and show an example", in, err, reason)
		}
	}
}

func TestFormatConstraints(t *testing.T) {
	t.Parallel()
	for n, want := range map[int]string{65536: "2^16", 1: "2^0", 100: "100"} {
		if got := FormatConstraints(n); got != want {
			t.Errorf("FormatConstraints(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestValidateNamesAllowedValues(t *testing.T) {
	t.Parallel()
	good := Config{Circuit: "sha256", Constraints: 1024, Backend: "cpu", Phases: "all", SRS: "setup", Count: 1}
	if err := good.Validate(); err != nil {
		t.Fatalf("valid config rejected: %v", err)
	}
	for _, storage := range append([]string{""}, LCStorages...) {
		c := good
		c.LCStorage = storage
		if err := c.Validate(); err != nil {
			t.Errorf("lc-storage %q rejected: %v", storage, err)
		}
	}
	for _, mode := range append([]string{""}, CounterModes...) {
		c := good
		c.Counters = mode
		if err := c.Validate(); err != nil {
			t.Errorf("counters %q rejected: %v", mode, err)
		}
	}
	pipelined := good
	pipelined.Pipeline, pipelined.Count = true, 2
	if err := pipelined.Validate(); err != nil {
		t.Errorf("a pipeline of 2 proofs rejected: %v", err)
	}
	for _, threads := range []int{0, 1, 64} {
		c := good
		c.Threads = threads
		if err := c.Validate(); err != nil {
			t.Errorf("threads %d rejected: %v", threads, err)
		}
	}
	cases := []struct {
		mutate func(*Config)
		want   string
	}{
		{func(c *Config) { c.Backend = "tpu" }, "allowed values are cpu, gpu, auto"},
		{func(c *Config) { c.Phases = "msm" }, "allowed values are all, synthesis"},
		{func(c *Config) { c.Circuit = "poseidon" }, "allowed values are sha256"},
		{func(c *Config) { c.SRS = "ceremony" }, "allowed values are setup, random"},
		{func(c *Config) { c.LCStorage = "smallvec" }, `unknown lc-storage "smallvec": allowed values are heap, inline`},
		{func(c *Config) { c.Counters = "on" }, `unknown counters "on": allowed values are auto, off`},
		{func(c *Config) { c.Threads = -1 }, "threads -1: give 1 or more"},
		{func(c *Config) { c.Count = 0 }, "at least 1"},
		{func(c *Config) { c.Warmup = -1 }, "0 or more"},
		{func(c *Config) { c.Constraints = MaxConstraints + 1 }, "out of range"},
		{func(c *Config) { c.SRS = "random"; c.Verify = true }, "cannot verify"},
		{func(c *Config) { c.Pipeline = true }, "a pipeline needs at least 2 proofs"},
		{func(c *Config) { c.Pipeline, c.Count, c.Phases = true, 4, "synthesis" }, "--pipeline with --phases synthesis"},
	}
	for _, tc := range cases {
		c := good
		tc.mutate(&c)
		err := c.Validate()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Validate() = %v; want an error containing %q", err, tc.want)
		}
	}
}

func TestGCPercentLetsGarbageGrowByAQuarterOrAGiB(t *testing.T) {
	const gib = 1 << 30
	for _, tc := range []struct {
		live uint64
		want int
	}{
		{0, 100}, {64 << 20, 100}, {gib, 100}, {2 * gib, 50}, {3 * gib, 33}, {4 * gib, 25}, {12 * gib, 25}, {40 * gib, 25},
	} {
		if got := gcPercent(tc.live); got != tc.want {
			t.Errorf("gcPercent(%d MiB) = %d, want %d", tc.live>>20, got, tc.want)
		}
	}
}

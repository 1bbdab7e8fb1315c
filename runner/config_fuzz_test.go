package runner

import (
	"errors"
	"os"
	"testing"
)

// FuzzParseConfig parses any .perfbot.yml: it never panics; a refusal
// wraps ErrInvalidConfig (so the CLI exits 2); what it accepts is valid
// by the rules the bad-input tests check one by one (at least one
// benchmark, count ≥ 1, max_count ≥ count, α in (0, 0.5), a known order);
// and parsing is deterministic: the same bytes give the same hash.
func FuzzParseConfig(f *testing.F) {
	if b, err := os.ReadFile("testdata/perfbot.example.yml"); err == nil {
		f.Add(b)
	}
	for _, s := range []string{
		"benchmarks:\n  - name: x\n    command: [./x]\n",
		"benchmarks:\n  - name: x\n    command: [./x]\ncount: 5\nmax_count: 3\n",
		"benchmarks:\n  - name: x\n    command: [./x]\nthresholds: {alpha: 0.7}\n",
		"benchmarks:\n  - name: x\n    command: [./x]\norder: sideways\n",
		"benchmarks: []\n", "count: [1\n", "---\n---\n", "unknown_key: 1\n", "",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		cfg, err := ParseConfig(data)
		if err != nil {
			if !errors.Is(err, ErrInvalidConfig) {
				t.Fatalf("%q: error %v does not wrap ErrInvalidConfig", data, err)
			}
			return
		}
		if len(cfg.Benchmarks) == 0 || cfg.Count < 1 || cfg.MaxCount < cfg.Count ||
			!(cfg.Thresholds.Alpha > 0 && cfg.Thresholds.Alpha < 0.5) {
			t.Fatalf("%q: accepted %+v", data, cfg)
		}
		switch cfg.Order {
		case OrderRandom, OrderABBA, OrderAlternate:
		default:
			t.Fatalf("%q: accepted order %q", data, cfg.Order)
		}
		again, err := ParseConfig(data)
		if err != nil || again.Hash() != cfg.Hash() {
			t.Fatalf("%q: a second parse gives %v, hash %s vs %s", data, err, again.Hash(), cfg.Hash())
		}
	})
}

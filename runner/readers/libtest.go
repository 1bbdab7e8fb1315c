package readers

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/analysis"
)

// libtest reads the lines Rust's built-in bench harness (cargo bench
// without criterion, #[bench]) prints on standard output:
//
//	test tests::bench_fib ... bench:       1,234 ns/iter (+/- 56)
//	test tests::bench_copy ... bench:          78.28 ns/iter (+/- 30.13) = 52512 MB/s
//
// Each line is one value of sec/op (1,234 ns/iter is 1.234e-6 sec/op) and,
// with b.bytes set, one of B/s (MB/s times 10⁶). The benchmark is the
// test's path with "::" as "/": "tests::bench_fib" is "tests/bench_fib".
// Lines of tests that are ignored, pass or fail are not values.
type libtest struct{}

// libtestLine matches a bench line: the name, ns/iter, and MB/s if any.
var libtestLine = regexp.MustCompile(`^test (\S+)\s+\.\.\. bench:\s+([0-9][0-9,._]*) ns/iter \(\+/- [0-9][0-9,._]*\)(?: = ([0-9][0-9,._]*) MB/s)?\s*$`)

// errLibtestWant says what a libtest reader wants.
var errLibtestWant = errors.New(`want lines "test NAME ... bench: N ns/iter (+/- D)" on stdout, as cargo bench prints for #[bench] functions`)

func (libtest) Read(o Output) ([]analysis.Sample, error) {
	var out []analysis.Sample
	for n, line := range bytes.Split(o.Stdout, []byte("\n")) {
		m := libtestLine.FindSubmatch(bytes.TrimRight(line, "\r"))
		if m == nil {
			continue
		}
		name := splitName(strings.ReplaceAll(string(m[1]), "::", "/"), false)
		if name == "" {
			continue // "test :: ...": no name to keep its values under
		}
		ns, err := libtestNumber(m[2])
		if err != nil {
			return nil, fmt.Errorf("read libtest output: stdout:%d: %v: %w", n+1, err, errLibtestWant)
		}
		if v := ns * 1e-9; !math.IsInf(v, 0) {
			out = append(out, analysis.Sample{Key: analysis.Key{Benchmark: name, Unit: secPerOp}, Value: v})
		}
		if m[3] != nil {
			mbs, err := libtestNumber(m[3])
			if err != nil {
				return nil, fmt.Errorf("read libtest output: stdout:%d: %v: %w", n+1, err, errLibtestWant)
			}
			if v := mbs * 1e6; !math.IsInf(v, 0) {
				out = append(out, analysis.Sample{Key: analysis.Key{Benchmark: name, Unit: "B/s"}, Value: v})
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read libtest output: no bench line in %d bytes of stdout: %w", len(o.Stdout), errLibtestWant)
	}
	return out, nil
}

// libtestNumber parses a number as libtest prints it, with ',' (older
// Rust) or '_' between thousands.
func libtestNumber(b []byte) (float64, error) {
	s := strings.NewReplacer(",", "", "_", "").Replace(string(b))
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, fmt.Errorf("%q is not a number", b)
	}
	return v, nil
}

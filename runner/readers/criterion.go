package readers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"strings"

	"github.com/perfbot/perfbot/analysis"
)

// criterion reads the result files of Rust's criterion crate: under its
// directory (target/criterion), each benchmark's last measurement is
// <group>/<function>/<value>/new/, where benchmark.json names it and
// sample.json holds its samples, "iters" and "times" (total nanoseconds
// of each sample). Each sample is one value, times[i]/iters[i] in sec/op.
// The base/, change/ and report/ directories and saved baselines
// (--save-baseline NAME) are not read: only benchmark.json files in a
// directory named new, and only those written since Output.Start.
//
// The benchmark is the group_id split at "/" (as nameParts reads it),
// then function=FUNCTION_ID when there is one, then param=VALUE_STR when
// there is one (VALUE_STR as its own parts when it holds "="). So
// bench_function("fib 20") is "fib_20", and in group "sort",
// BenchmarkId::new("quick", 1024) is "sort/function=quick/param=1024"
// and BenchmarkId::from_parameter(1024) is "sort/param=1024".
type criterion struct {
	path string // criterion's directory, relative to Output.Dir
}

func (c criterion) Read(o Output) ([]analysis.Sample, error) {
	root := filepath.Join(o.Dir, c.path)
	if _, err := os.Stat(root); err != nil {
		return nil, fmt.Errorf("read criterion results: %w (want the directory criterion writes, %s by default, relative to where the program runs)", err, DefaultCriterionPath)
	}
	var out []analysis.Sample
	var found, old int
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || d.Name() != "benchmark.json" || filepath.Base(filepath.Dir(path)) != "new" {
			return nil
		}
		rel, _ := filepath.Rel(o.Dir, path)
		if fi, err := d.Info(); err != nil {
			return err
		} else if stale(fi, o.Start) {
			old++
			return nil
		}
		found++
		bench, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		sample, err := os.ReadFile(filepath.Join(filepath.Dir(path), "sample.json"))
		if err != nil {
			return err
		}
		s, err := parseCriterion(bench, sample)
		if err != nil {
			return fmt.Errorf("%s: %w", filepath.Dir(rel), err)
		}
		out = append(out, s...)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read criterion results: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read criterion results: no benchmark under %s was measured in this run (%d new/benchmark.json files read, %d older than the run): want GROUP/…/new/benchmark.json and sample.json, written by criterion when the program runs", c.path, found, old)
	}
	return out, nil
}

// errCriterionWant says what a criterion reader wants in a new/ directory.
var errCriterionWant = errors.New(`want benchmark.json {"group_id": …, "function_id": …, "value_str": …} and sample.json {"iters": [N, …], "times": [NS, …]}`)

// parseCriterion turns one benchmark's benchmark.json and sample.json into
// samples.
func parseCriterion(benchJSON, sampleJSON []byte) ([]analysis.Sample, error) {
	var b struct {
		GroupID    string  `json:"group_id"`
		FunctionID *string `json:"function_id"`
		ValueStr   *string `json:"value_str"`
	}
	if err := json.Unmarshal(benchJSON, &b); err != nil {
		return nil, fmt.Errorf("benchmark.json: %v: %w", err, errCriterionWant)
	}
	var s struct {
		Iters []float64 `json:"iters"`
		Times []float64 `json:"times"`
	}
	if err := json.Unmarshal(sampleJSON, &s); err != nil {
		return nil, fmt.Errorf("sample.json: %v: %w", err, errCriterionWant)
	}
	name := criterionName(b.GroupID, b.FunctionID, b.ValueStr)
	if name == "" {
		return nil, fmt.Errorf("benchmark.json has no group_id: %w", errCriterionWant)
	}
	if len(s.Iters) != len(s.Times) || len(s.Iters) == 0 {
		return nil, fmt.Errorf("sample.json of %s has %d iters and %d times: %w", name, len(s.Iters), len(s.Times), errCriterionWant)
	}
	out := make([]analysis.Sample, 0, len(s.Iters))
	for i, n := range s.Iters {
		v := s.Times[i] / n * 1e-9
		if n <= 0 || math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		out = append(out, analysis.Sample{Key: analysis.Key{Benchmark: name, Unit: secPerOp}, Value: v})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("sample.json of %s has no sample with iters > 0 and a finite time: %w", name, errCriterionWant)
	}
	return out, nil
}

// criterionName is the benchmark name of a criterion benchmark id.
func criterionName(group string, function, value *string) string {
	if splitName(group, false) == "" {
		return ""
	}
	parts := strings.Split(group, "/")
	if function != nil && tidyPart(*function) != "" {
		parts = append(parts, kv("function", *function))
	}
	if value != nil && tidyPart(*value) != "" {
		if strings.Contains(*value, "=") {
			parts = append(parts, strings.Split(*value, "/")...)
		} else {
			parts = append(parts, kv("param", *value))
		}
	}
	return nameParts(parts, false)
}

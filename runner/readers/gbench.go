package readers

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/analysis"
)

// gbench reads Google Benchmark's JSON (--benchmark_format=json on
// standard output, or the file path that --benchmark_out= names).
//
// Each entry of "benchmarks" whose run_type is "iteration" (or absent, as
// before Google Benchmark 1.5) is one repetition and gives one value per
// unit: real_time as sec/op, cpu_time as cpu-sec/op (both converted from
// time_unit), and each user counter (a numeric field Google Benchmark
// does not define itself) under counterUnit's name. Aggregates (_mean,
// _median, _stddev, _cv, BigO, RMS) are left out, since perfbot takes its
// own median of the repetitions; entries with error_occurred or skipped
// set are left out too.
//
// The benchmark is run_name (name without an aggregate's suffix) read
// by nameParts with colons: "BM_Sort/1024" is "BM_Sort/arg0=1024",
// "BM_Two/n:1/k:2" is "BM_Two/n=1/k=2", "BM_F/min_time:0.010/threads:2"
// is "BM_F/min_time=0.010/threads=2".
type gbench struct {
	path string // the --benchmark_out file; "" reads standard output
}

// gbenchKnown lists the numeric fields of a benchmark entry that are not
// user counters.
var gbenchKnown = map[string]bool{
	"family_index": true, "per_family_instance_index": true,
	"repetitions": true, "repetition_index": true, "threads": true,
	"iterations": true, "real_time": true, "cpu_time": true,
	"complexity_n": true, "big_o": true, "rms": true,
}

// gbenchEntry is the part of a benchmark entry every entry has.
type gbenchEntry struct {
	Name          string   `json:"name"`
	RunName       string   `json:"run_name"`
	RunType       string   `json:"run_type"`
	RealTime      *float64 `json:"real_time"`
	CPUTime       *float64 `json:"cpu_time"`
	TimeUnit      string   `json:"time_unit"`
	ErrorOccurred bool     `json:"error_occurred"`
	Skipped       any      `json:"skipped"` // a bool or a skip message, by version
	AggregateName string   `json:"aggregate_name"`
}

func (g gbench) Read(o Output) ([]analysis.Sample, error) {
	src, data := "stdout", o.Stdout
	if g.path != "" {
		src = g.path
		var err error
		if data, err = readFile(o, g.path, "gbench --benchmark_out file"); err != nil {
			return nil, fmt.Errorf("read gbench JSON: %w", err)
		}
	}
	s, err := parseGbench(data)
	if err != nil {
		return nil, fmt.Errorf("read gbench JSON from %s: %w", src, err)
	}
	return s, nil
}

// errGbenchWant says what a gbench reader wants.
var errGbenchWant = errors.New(`want Google Benchmark's JSON, {"context": …, "benchmarks": [{"name": …, "run_type": "iteration", "real_time": …, "time_unit": …}, …]} (run the program with --benchmark_format=json, or read --benchmark_out= with path)`)

// parseGbench reads Google Benchmark JSON from data; text before the first
// line that starts with '{' (a program's own messages) is skipped.
func parseGbench(data []byte) ([]analysis.Sample, error) {
	start := -1
	for i := 0; i < len(data); {
		if data[i] == '{' {
			start = i
			break
		}
		j := bytes.IndexByte(data[i:], '\n')
		if j < 0 {
			break
		}
		i += j + 1
	}
	if start < 0 {
		return nil, fmt.Errorf("no line starts a JSON object: %w", errGbenchWant)
	}
	var doc struct {
		Benchmarks []json.RawMessage `json:"benchmarks"`
	}
	if err := json.NewDecoder(bytes.NewReader(data[start:])).Decode(&doc); err != nil {
		return nil, fmt.Errorf("%v: %w", err, errGbenchWant)
	}
	var out []analysis.Sample
	for i, raw := range doc.Benchmarks {
		var e gbenchEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, fmt.Errorf("benchmarks[%d]: %v: %w", i, err, errGbenchWant)
		}
		if e.RunType == "aggregate" || e.AggregateName != "" || e.ErrorOccurred || skipped(e.Skipped) {
			continue
		}
		name := e.RunName
		if name == "" {
			name = e.Name
		}
		bench := splitName(name, true)
		if bench == "" {
			return nil, fmt.Errorf("benchmarks[%d] has no name: %w", i, errGbenchWant)
		}
		if e.RealTime == nil {
			return nil, fmt.Errorf("benchmarks[%d] (%s) has no real_time: %w", i, name, errGbenchWant)
		}
		unit := e.TimeUnit
		if unit == "" {
			unit = "ns" // what Google Benchmark prints without ->Unit
		}
		f, ok := timeUnits[unit]
		if !ok {
			return nil, fmt.Errorf("benchmarks[%d] (%s): time_unit %q is not one of ns, us, ms, s", i, name, unit)
		}
		add := func(unit string, v float64) {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				out = append(out, analysis.Sample{Key: analysis.Key{Benchmark: bench, Unit: unit}, Value: v})
			}
		}
		add(secPerOp, *e.RealTime*f)
		if e.CPUTime != nil {
			add("cpu-"+secPerOp, *e.CPUTime*f)
		}
		var fields map[string]any
		if err := json.Unmarshal(raw, &fields); err != nil {
			return nil, fmt.Errorf("benchmarks[%d]: %v: %w", i, err, errGbenchWant)
		}
		var counters []string
		for k, v := range fields {
			if _, num := v.(float64); num && !gbenchKnown[k] && tidyPart(k) != "" {
				counters = append(counters, k)
			}
		}
		sort.Strings(counters)
		for _, k := range counters {
			add(counterUnit(k), fields[k].(float64))
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no benchmark ran an iteration (%d entries, none with run_type \"iteration\" and a finite real_time): %w", len(doc.Benchmarks), errGbenchWant)
	}
	return out, nil
}

// skipped reports whether a benchmark entry's "skipped" field says it was
// skipped.
func skipped(v any) bool {
	switch v := v.(type) {
	case bool:
		return v
	case string:
		return v != ""
	case float64:
		return v != 0
	}
	return false
}

// counterUnit returns the unit of a Google Benchmark counter: what
// SetBytesProcessed reports, bytes_per_second, is "B/s"; another
// NAME_per_second (SetItemsProcessed's items_per_second) is "NAME/s";
// NAME_per_iter (the memory manager's allocs_per_iter) is "NAME/op"; a
// name with a "/" stays as it is; any other counter is "NAME/op". JSON
// does not say whether a counter was a rate (kIsRate): name rates
// NAME_per_second to have them compared as rates.
func counterUnit(name string) string {
	name = tidyPart(name)
	switch {
	case strings.Contains(name, "/"):
		return name
	case name == "bytes_per_second":
		return "B/s"
	case strings.HasSuffix(name, "_per_second") && len(name) > len("_per_second"):
		return strings.TrimSuffix(name, "_per_second") + "/s"
	case strings.HasSuffix(name, "_per_iter") && len(name) > len("_per_iter"):
		return strings.TrimSuffix(name, "_per_iter") + "/op"
	}
	return name + "/op"
}

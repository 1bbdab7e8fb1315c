package readers

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"path"
	"sort"
	"strings"

	"github.com/perfbot/perfbot/analysis"
)

// hyperfine reads the file hyperfine's --export-json writes. Each of its
// results gives one value of sec/op per timed run ("times", in seconds);
// a run that exited non-zero (kept with hyperfine -i) is left out.
//
// The benchmark is the command, absolute paths cut to their last element
// (stableCommand), with its spaces and "/" made '_' (one
// part: "sleep 0.01" is "sleep_0.01", "./prove --n 4" is
// "._prove_--n_4"), or, when hyperfine ran a parameter scan (-L, -P), the
// parameters as key=value parts in key order: -L n 1,2 gives "n=1" and
// "n=2". If two results would share a name, every result's name is the
// command's followed by its parameters ("sleep_0.01/n=1").
type hyperfine struct {
	path string // the --export-json file, relative to Output.Dir
}

// errHyperfineWant says what a hyperfine reader wants.
var errHyperfineWant = errors.New(`want the JSON file of hyperfine --export-json, {"results": [{"command": …, "times": [SECONDS, …], …}, …]}`)

func (h hyperfine) Read(o Output) ([]analysis.Sample, error) {
	data, err := readFile(o, h.path, "hyperfine --export-json file")
	if err != nil {
		return nil, fmt.Errorf("read hyperfine results: %w", err)
	}
	s, err := parseHyperfine(data)
	if err != nil {
		return nil, fmt.Errorf("read hyperfine results from %s: %w", h.path, err)
	}
	return s, nil
}

// hyperfineResult is one command's result in hyperfine's JSON.
type hyperfineResult struct {
	Command    string            `json:"command"`
	Times      []float64         `json:"times"`
	ExitCodes  []*int            `json:"exit_codes"`
	Parameters map[string]string `json:"parameters"`
}

// parseHyperfine reads hyperfine's JSON export.
func parseHyperfine(data []byte) ([]analysis.Sample, error) {
	var doc struct {
		Results []hyperfineResult `json:"results"`
	}
	if err := json.Unmarshal(data, &doc); err != nil {
		return nil, fmt.Errorf("%v: %w", err, errHyperfineWant)
	}
	names := make([]string, len(doc.Results))
	seen := map[string]bool{}
	clash := false
	for i, r := range doc.Results {
		names[i] = hyperfineName(r, len(r.Parameters) == 0)
		if names[i] == "" {
			return nil, fmt.Errorf("results[%d] has neither a command nor parameters: %w", i, errHyperfineWant)
		}
		clash = clash || seen[names[i]]
		seen[names[i]] = true
	}
	if clash {
		for i, r := range doc.Results {
			names[i] = hyperfineName(r, true)
		}
	}
	var out []analysis.Sample
	for i, r := range doc.Results {
		for j, t := range r.Times {
			if len(r.ExitCodes) == len(r.Times) && (r.ExitCodes[j] == nil || *r.ExitCodes[j] != 0) {
				continue
			}
			if math.IsNaN(t) || math.IsInf(t, 0) {
				continue
			}
			out = append(out, analysis.Sample{Key: analysis.Key{Benchmark: names[i], Unit: secPerOp}, Value: t})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no timed run that exited 0 in %d results: %w", len(doc.Results), errHyperfineWant)
	}
	return out, nil
}

// stableCommand returns command with every absolute path in it cut to
// its last element: a program under ${PERFBOT_OUT} lives in a directory
// of its revision's build, and the name must be the same for every
// revision so that base and head compare ("/data/builds/1a2b…/prove
// --n 5" is "prove --n 5").
func stableCommand(command string) string {
	words := strings.Fields(command)
	for i, w := range words {
		if strings.HasPrefix(w, "/") && len(w) > 1 {
			words[i] = path.Base(w)
		}
	}
	return strings.Join(words, " ")
}

// hyperfineName is a result's benchmark name: its parameters as
// key=value parts, after its command when withCommand is set.
func hyperfineName(r hyperfineResult, withCommand bool) string {
	var parts []string
	if withCommand {
		parts = append(parts, strings.ReplaceAll(stableCommand(r.Command), "/", "_"))
	}
	keys := make([]string, 0, len(r.Parameters))
	for k := range r.Parameters {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		parts = append(parts, kv(k, r.Parameters[k]))
	}
	return nameParts(parts, false)
}

package analysis

import (
	"bytes"
	"strings"
)

// A Key names one series of measurements: a benchmark, one of its phases
// and a unit.
type Key struct {
	// Benchmark is the benchmark's full name without the "Benchmark"
	// prefix, the phase=… part and the -GOMAXPROCS suffix, e.g.
	// "Prove/circuit=sha256/constraints=65536/backend=cpu".
	Benchmark string `json:"benchmark"`
	// Phase is the value of the name's phase=… part ("synthesis",
	// "msm_h/step=sort" keeps what follows); "" when the name has none,
	// as for a plain go test -bench suite.
	Phase string `json:"phase"`
	// Unit is benchfmt's tidied unit ("sec/op", "B/op", "constraints/s").
	Unit string `json:"unit"`
}

// String returns "Benchmark/phase=P unit", or "Benchmark unit" without a
// phase.
func (k Key) String() string {
	name := k.Benchmark
	if k.Phase != "" {
		name += "/phase=" + k.Phase
	}
	return name + " " + k.Unit
}

// SplitName splits a benchmark name (as in benchfmt.Result.Name, without
// the "Benchmark" prefix, with or without a -GOMAXPROCS suffix) into the
// benchmark and its phase. Name parts after phase=… belong to the phase:
// "Prove/x=1/phase=msm_h/step=sort" gives ("Prove/x=1", "msm_h/step=sort").
func SplitName(name []byte) (benchmark, phase string) {
	// Drop a -N GOMAXPROCS suffix the way benchfmt's Name.Parts does.
	if i := bytes.LastIndexByte(name, '-'); i > 0 && i < len(name)-1 {
		digits := true
		for _, c := range name[i+1:] {
			if c < '0' || c > '9' {
				digits = false
				break
			}
		}
		if digits && !bytes.ContainsRune(name[i:], '/') {
			name = name[:i]
		}
	}
	s := string(name)
	if i := strings.Index(s, "/phase="); i >= 0 {
		return s[:i], s[i+len("/phase="):]
	}
	return s, ""
}

// A Sample is one value measured by one run.
type Sample struct {
	Key
	Value float64 `json:"value"`
}

// A Status is how a run ended. Only StatusOK runs carry samples that
// count; every other status is reported as what it is, never as a
// regression or an improvement.
type Status string

// The run statuses.
const (
	StatusOK          Status = "ok"
	StatusBuildFailed Status = "build-failed"
	StatusCrashed     Status = "crashed"   // non-zero exit, killed by a signal, or could not be started
	StatusTimedOut    Status = "timed-out" // exceeded the per-run timeout
	StatusNoOutput    Status = "no-output" // exited 0 but printed no parsable benchmark line
)

// Statuses lists every status.
var Statuses = []Status{StatusOK, StatusBuildFailed, StatusCrashed, StatusTimedOut, StatusNoOutput}

// A Run is one execution of one revision's benchmark command: its status
// and, when it is ok, its samples. A run may report several values for one
// Key (a benchmark run with -count); analysis takes their median as the
// run's value, so each run counts once.
type Run struct {
	Revision string `json:"revision"` // full commit SHA
	Status   Status `json:"status"`
	// Round is the round the run was measured in, from 1, when the
	// runner ran the sides in rounds (one run of each, back to back); 0
	// when unknown. Options.Paired pairs base's and head's runs of one
	// round.
	Round int `json:"round,omitempty"`
	// Tool is the tool the run ran under: "" for a timed run, ToolCallgrind
	// for a run under valgrind's callgrind, whose samples are simulated
	// instruction counts (see SimInstructionsUnit). Compare compares
	// timed runs with statistics and callgrind runs exactly, apart.
	Tool    string   `json:"tool,omitempty"`
	Detail  string   `json:"detail,omitempty"` // why it failed: exit status, stderr tail
	Samples []Sample `json:"samples,omitempty"`
	// Profiles are the profiles the run wrote, if its benchmark asked for
	// them; analysis reads them to explain regressed CPU phases.
	Profiles []Profile `json:"-"` // Spans say when each phase of each proof ran (span lines), where the
	// program printed them; analysis builds the critical path of phases
	// that overlap from them (see Overlap).
	Spans []Span `json:"spans,omitempty"`
}

// A Profile is one profile a benchmark run wrote.
type Profile struct {
	// Benchmark is the benchmark command that wrote it (the runner's
	// benchmark name, as in "process/benchmark=NAME").
	Benchmark string
	// Kind is what was profiled: ProfileCPU or ProfileMem.
	Kind string
	// Data is the profile as written: pprof's gzipped protocol buffer
	// (a CPU profile's samples labelled phase=NAME by the prover).
	Data []byte
}

// The Kinds of profiles.
const (
	ProfileCPU = "cpu" // a CPU profile: samples labelled phase=NAME
	ProfileMem = "mem" // a heap profile of the whole run (runtime/pprof's allocs profile)
)

// ToolCallgrind is the Run.Tool of a run under valgrind's callgrind.
const ToolCallgrind = "callgrind"

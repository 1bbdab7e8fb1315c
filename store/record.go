package store

import (
	"fmt"
	"slices"
	"time"

	"github.com/perfbot/perfbot/analysis"
)

// A Kind is why a run was made.
type Kind string

// The run kinds.
const (
	KindBaseline  Kind = "baseline"  // a push to the default branch: history, noise floor
	KindCompare   Kind = "compare"   // one side of a base/head comparison
	KindCalibrate Kind = "calibrate" // runs that measure the machine's noise
	KindBisect    Kind = "bisect"    // a commit a bisection measured: not history, reusable by later bisections
)

// Kinds lists every run kind.
var Kinds = []Kind{KindBaseline, KindCompare, KindCalibrate, KindBisect}

func (k Kind) valid() bool {
	return slices.Contains(Kinds, k)
}

// A Commit is the revision a run measured. Only SHA is required; the
// other fields, when set, are recorded for the commit (a later run that
// leaves them empty keeps what was recorded).
type Commit struct {
	SHA        string
	Parents    []string
	AuthorTime time.Time
	Subject    string
}

// A RunRecord is one stored run: where and how it ran, how it ended and
// its samples.
type RunRecord struct {
	// ID is assigned by SaveRun; SaveRun ignores it.
	ID int64
	// Repo names the repository: a path, a URL or owner/name.
	Repo   string
	Commit Commit
	Kind   Kind
	// ConfigHash identifies the benchmark configuration; only runs with
	// equal hashes are comparable.
	ConfigHash string
	// Config is the benchmark configuration as JSON, or "".
	Config string
	// Machine is a short id of the machine the run ran on.
	Machine string
	// Env is the machine's fingerprint (CPU, GPU, driver, kernel…) as
	// JSON, or "".
	Env string
	// StartedAt is required; EndedAt may be zero. Both are stored in UTC
	// with microsecond precision.
	StartedAt time.Time
	EndedAt   time.Time
	Status    analysis.Status
	// Tool is the tool the run ran under: "" for a timed run,
	// analysis.ToolCallgrind for a benchmark's run under valgrind's
	// callgrind, whose samples are simulated instruction counts.
	Tool string
	// Detail says why a run failed: exit status, stderr tail.
	Detail  string
	Samples []analysis.Sample
	// Profiles are the profiles the run wrote, stored with it (in the
	// same transaction) and read back by Profiles, or by Runs when
	// RunQuery.Profiles is set. Each needs a benchmark, a kind and data,
	// at most MaxProfileBytes of it.
	Profiles []analysis.Profile
	// Spans are the run's span lines (when each phase of each proof
	// ran), stored with it as one JSON value.
	Spans []analysis.Span
	// SessionID is the session that made the run (BeginSession), or 0
	// for none. Runs returns it with the session's state.
	SessionID    int64
	SessionState SessionState
	// Round is the round of its session the run ran in, from 1 (in each
	// round every side runs each benchmark once), so that runs measured
	// beside each other can be paired; 0 when unknown, as for every run
	// stored before rounds were.
	Round int
}

// MaxProfileBytes is the largest profile SaveRun stores: 64 MiB, what
// the runner keeps at most.
const MaxProfileBytes = 64 << 20

// Run returns the run as analysis sees it, with the profiles it carries.
func (r *RunRecord) Run() analysis.Run {
	return analysis.Run{Revision: r.Commit.SHA, Status: r.Status, Round: r.Round, Tool: r.Tool, Detail: r.Detail, Samples: r.Samples, Profiles: r.Profiles, Spans: r.Spans}
}

func (r *RunRecord) validate() error {
	switch {
	case r.Repo == "":
		return fmt.Errorf("no repository")
	case r.Commit.SHA == "":
		return fmt.Errorf("no commit")
	case !r.Kind.valid():
		return fmt.Errorf("unknown kind %q (want %s, %s, %s or %s)", r.Kind, KindBaseline, KindCompare, KindCalibrate, KindBisect)
	case r.StartedAt.IsZero():
		return fmt.Errorf("no start time")
	case r.Round < 0:
		return fmt.Errorf("round %d (want 1 or more, or 0 for none)", r.Round)
	case r.Tool != "" && r.Tool != analysis.ToolCallgrind:
		return fmt.Errorf("unknown tool %q (want none or %s)", r.Tool, analysis.ToolCallgrind)
	}
	for i, p := range r.Profiles {
		switch {
		case p.Benchmark == "":
			return fmt.Errorf("profile %d: no benchmark", i)
		case p.Kind == "":
			return fmt.Errorf("profile %d (%s): no kind", i, p.Benchmark)
		case len(p.Data) == 0:
			return fmt.Errorf("profile %d (%s %s): no data", i, p.Benchmark, p.Kind)
		case len(p.Data) > MaxProfileBytes:
			return fmt.Errorf("profile %d (%s %s): %d bytes, more than the %d MiB a profile may have",
				i, p.Benchmark, p.Kind, len(p.Data), MaxProfileBytes>>20)
		}
	}
	for _, s := range analysis.Statuses {
		if r.Status == s {
			return nil
		}
	}
	return fmt.Errorf("unknown status %q", r.Status)
}

// A RunQuery selects runs. Zero fields do not filter.
type RunQuery struct {
	Repo       string
	Commits    []string // runs of any of these SHAs
	Kind       Kind
	ConfigHash string
	Machine    string
	// Status keeps runs that ended so: analysis.StatusOK for the runs
	// whose samples count.
	Status analysis.Status
	// Limit > 0 keeps only the newest Limit runs.
	Limit int
	// Profiles loads each run's profiles into RunRecord.Profiles too;
	// they may be large, so only when asked.
	Profiles bool
	// Whole keeps only runs whose set is whole: stored by a session
	// that ended, or without a session; and the runs of session Own,
	// the caller's own, when Own is not 0. A killed process's runs
	// (its session running or abandoned) are left out.
	Whole bool
	Own   int64
}

// A HistoryQuery selects the ok baseline runs of one repository that
// History reads: only whole ones (see RunQuery.Whole).
type HistoryQuery struct {
	Repo string
	// Machine and ConfigHash, when set, keep runs of that machine and
	// configuration: the noise of one setup.
	Machine    string
	ConfigHash string
	// Keys are the series to read; empty means all.
	Keys []analysis.Key
	// Limit > 0 keeps only the newest Limit runs.
	Limit int
}

// A TrendPoint is one run's value of one key.
type TrendPoint struct {
	RunID     int64
	Commit    string
	Machine   string
	StartedAt time.Time
	// Value is the run's median for the key.
	Value float64
}

// A Comparison is a stored comparison of a head revision against a base:
// its verdict, its inputs and the report, as JSON and as rendered
// markdown.
type Comparison struct {
	// ID is assigned by SaveComparison; SaveComparison ignores it.
	ID      int64
	Repo    string
	BaseSHA string
	HeadSHA string
	// CreatedAt is when the comparison was made; SaveComparison uses the
	// current time when it is zero. Stored in UTC, microsecond precision.
	CreatedAt time.Time
	Verdict   string
	// Inputs (what was compared: runs, thresholds) and Report are JSON,
	// or "".
	Inputs   string
	Report   string
	Markdown string
	// SessionID is the session that measured it (0: none).
	SessionID int64
	// PR is the pull request it was made for (0: none).
	PR int
}

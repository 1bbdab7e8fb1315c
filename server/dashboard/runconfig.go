package dashboard

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/store"
)

// A comparison the dashboard makes from stored runs (a change page's
// segments, a compare page without a stored comparison) is judged as
// perfbot compare judged those runs: with the thresholds of the config
// they were measured with, and over the runs of that one config.

// runConfig is what the dashboard reads of a stored run's config
// (store.RunRecord.Config: the runner's config as JSON, defaults filled
// in): the thresholds and units that decide a comparison, as the runner
// hands them to analysis.Compare.
type runConfig struct {
	Thresholds struct {
		Alpha        float64 `json:"alpha"`
		MinChangePct float64 `json:"min_change_pct"`
		MinHistory   int     `json:"min_history"`
		Spending     string  `json:"spending"`
		Paired       bool    `json:"paired"`
		Headline     string  `json:"headline"`
		FailOn       string  `json:"fail_on"`
	} `json:"thresholds"`
	PrimaryUnits []string `json:"primary_units"`
}

// A RunsConfig says which config a comparison made from stored runs
// judged them with, and which runs it left out for being of another.
type RunsConfig struct {
	// Hash is the config's hash (store.RunRecord.ConfigHash): the newest
	// run's; Stored is false when its runs carry no config, and the
	// comparison took analysis's default options.
	Hash   string `json:"hash"`
	Stored bool   `json:"stored"`
	// Alpha and MinChangePct are the options it was judged with (the
	// config's thresholds.alpha and min_change_pct, or the defaults).
	Alpha        float64 `json:"alpha"`
	MinChangePct float64 `json:"min_change_pct"`
	// LeftOut counts the runs of other configs left out, Others those
	// configs' hashes.
	LeftOut int      `json:"left_out"`
	Others  []string `json:"others"`
}

// runsOfNewestConfig keeps the runs (oldest first, as store.Runs returns
// them) of the newest one's config, and returns them with that config's
// options and what was left out. No runs: no config, default options.
func runsOfNewestConfig(runs []store.RunRecord) ([]store.RunRecord, analysis.Options, RunsConfig, error) {
	rc := RunsConfig{Others: []string{}}
	if len(runs) == 0 {
		return nil, analysis.Options{}, rc, nil
	}
	newest := runs[len(runs)-1]
	for _, r := range runs {
		if r.StartedAt.After(newest.StartedAt) {
			newest = r
		}
	}
	var kept []store.RunRecord
	for _, r := range runs {
		if r.ConfigHash == newest.ConfigHash {
			kept = append(kept, r)
			continue
		}
		rc.LeftOut++
		if !slices.Contains(rc.Others, r.ConfigHash) {
			rc.Others = append(rc.Others, r.ConfigHash)
		}
	}
	rc.Hash = newest.ConfigHash
	opts, err := configOptions(newest.Config)
	if err != nil {
		return nil, analysis.Options{}, rc, fmt.Errorf("run %d: %w", newest.ID, err)
	}
	rc.Stored = newest.Config != ""
	d := analysis.DefaultOptions()
	rc.Alpha, rc.MinChangePct = cmp.Or(opts.Alpha, d.Alpha), cmp.Or(opts.MinChangePct, d.MinChangePct)
	return kept, opts, rc, nil
}

// configOptions returns the options a stored config judges with, as the
// runner passes them to analysis.Compare; a run stored without a config
// ("") gets analysis's defaults (the zero Options).
func configOptions(configJSON string) (analysis.Options, error) {
	if configJSON == "" {
		return analysis.Options{}, nil
	}
	var c runConfig
	if err := json.Unmarshal([]byte(configJSON), &c); err != nil {
		return analysis.Options{}, fmt.Errorf("stored config: %w", err)
	}
	t := c.Thresholds
	return analysis.Options{Alpha: t.Alpha, Spending: t.Spending, MinChangePct: t.MinChangePct, MinHistory: t.MinHistory,
		PrimaryUnits: c.PrimaryUnits, Paired: t.Paired, Headline: t.Headline, FailOn: t.FailOn}, nil
}

// Text says what the runs were judged with, to follow "judged with":
// "α = 0.01 and a noise floor of at least 2% (the thresholds of config
// 1a2b3c4d5e6f, the newest runs'); 12 runs of 1 other config
// (9f8e7d6c5b4a) left out: runs of two configs are not one series".
func (rc RunsConfig) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "α = %v and a noise floor of at least %v%%", rc.Alpha, rc.MinChangePct)
	switch {
	case rc.Hash == "" && !rc.Stored:
		b.WriteString(" (analysis's defaults: the runs carry no config)")
	case !rc.Stored:
		fmt.Fprintf(&b, " (analysis's defaults: config %s, the newest runs', was stored without its thresholds)", short12(rc.Hash))
	default:
		fmt.Fprintf(&b, " (the thresholds of config %s, the newest runs')", short12(rc.Hash))
	}
	if rc.LeftOut > 0 {
		b.WriteString("; " + rc.leftOut() + ": runs of two configs are not one series")
	}
	return b.String()
}

// leftOut says what was left out: "12 runs of 1 other config
// (9f8e7d6c5b4a) left out".
func (rc RunsConfig) leftOut() string {
	others := make([]string, len(rc.Others))
	for i, h := range rc.Others {
		others[i] = short12(h)
	}
	return fmt.Sprintf("%s of %s (%s) left out", plural(rc.LeftOut, "run"), plural(len(rc.Others), "other config"), strings.Join(others, ", "))
}

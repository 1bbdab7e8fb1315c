package main

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/store"
)

// Bad input for issue 15's settings ends with exit 2 and the allowed
// values before anything is built, measured or stored: a seed that is not
// a number, an order or spending function perfbot does not know, an α
// outside (0, 0.5), a max_count below count.
func TestCompareRefusesBadSequentialSettingsAndStoresNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, extra string
		args        []string
		want        string
	}{
		{"seed not a number", "", []string{"--seed", "abc"}, `--seed: "abc" is not a seed: want a whole number from 1 to 9223372036854775807`},
		{"seed zero", "", []string{"--seed", "0"}, `--seed: "0" is not a seed`},
		{"unknown order", "order: shuffled\n", nil, `order: "shuffled" is not one of random, abba, alternate`},
		{"unknown spending", "thresholds: {spending: haybittle}\n", nil, `thresholds.spending: "haybittle" is not one of obrien-fleming, pocock`},
		{"alpha a half", "thresholds: {alpha: 0.5}\n", nil, "thresholds.alpha: 0.5 is not above 0 and below 0.5"},
		{"alpha zero", "thresholds: {alpha: 0}\n", nil, "thresholds.alpha: 0 is not above 0 and below 0.5"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			built := t.TempDir() + "/built"
			dir, sha := shellRepo(t, shellConfig("touch "+built, steady, 6, 6, tc.extra))
			env := newRunEnv(t)
			_, errOut, code := perfbot(t, env.args(append([]string{"compare", "--repo", dir, "--base", sha, "--head", sha}, tc.args...)...)...)
			if code != exitUsage || !strings.Contains(errOut, tc.want) {
				t.Errorf("exit %d, stderr %q; want exit 2 saying %q", code, errOut, tc.want)
			}
			if _, err := os.Stat(built); err == nil {
				t.Errorf("the build ran")
			}
			assertNothingStored(t, env)
		})
	}
	t.Run("max_count below count", func(t *testing.T) {
		t.Parallel()
		dir, sha := shellRepo(t, shellConfig("true", steady, 10, 6, ""))
		env := newRunEnv(t)
		_, errOut, code := perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head", sha)...)
		if code != exitUsage || !strings.Contains(errOut, "max_count: 6 is less than count 10") {
			t.Errorf("exit %d, stderr %q", code, errOut)
		}
		assertNothingStored(t, env)
	})
}

// assertNothingStored checks that env's database, if it was created, has
// no runs and no comparisons.
func assertNothingStored(t *testing.T, env runEnv) {
	t.Helper()
	if _, err := os.Stat(env.db); err != nil {
		return // not even created
	}
	db, err := store.Open(context.Background(), env.db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	runs, err := db.Runs(context.Background(), store.RunQuery{})
	if err != nil || len(runs) != 0 {
		t.Errorf("%d runs stored (%v)", len(runs), err)
	}
	if n, err := db.ComparisonCounts(context.Background()); err != nil || len(n) != 0 {
		t.Errorf("comparisons stored: %v (%v)", n, err)
	}
}

// The JSON report carries the sequential design: looks, each look's
// threshold, and per row its threshold, the change's interval and MDE;
// the text and markdown reports state the looks and the seed.
func TestCompareReportsItsLooksThresholdsAndSeed(t *testing.T) {
	t.Parallel()
	// Ten runs at the first look: at the default α 0.01, shared by two
	// rows, six runs a side could not reach the threshold (2/C(12, 6) =
	// 0.0022), and the rows would have no MDE.
	dir, sha := shellRepo(t, shellConfig("true", steady, 10, 15, ""))
	env := newRunEnv(t)
	out, errOut, code := perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head", sha, "--format", "json", "--seed", "4242")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rep struct {
		Looks      int    `json:"looks"`
		Seed       uint64 `json:"seed"`
		Order      string `json:"order"`
		Sequential struct {
			Spending string `json:"spending"`
			MaxRuns  int    `json:"max_runs"`
			Looks    []struct {
				Runs      int     `json:"runs"`
				Threshold float64 `json:"threshold"`
			} `json:"looks"`
		} `json:"sequential"`
		Phases []struct {
			Phase     string   `json:"phase"`
			Unit      string   `json:"unit"`
			Threshold *float64 `json:"threshold"`
			Lo        *float64 `json:"delta_lo_pct"`
			Hi        *float64 `json:"delta_hi_pct"`
			MDE       *float64 `json:"mde_pct"`
			Verdict   string   `json:"verdict"`
		} `json:"phases"`
	}
	if err := json.Unmarshal([]byte(out), &rep); err != nil {
		t.Fatal(err)
	}
	if rep.Seed != 4242 || rep.Order != "random" || rep.Sequential.Spending != "obrien-fleming" || rep.Sequential.MaxRuns != 15 {
		t.Errorf("seed %d order %q spending %q max %d", rep.Seed, rep.Order, rep.Sequential.Spending, rep.Sequential.MaxRuns)
	}
	if rep.Looks != len(rep.Sequential.Looks) || rep.Looks < 1 || rep.Sequential.Looks[0].Runs != 10 {
		t.Fatalf("looks %d: %+v", rep.Looks, rep.Sequential.Looks)
	}
	last := rep.Sequential.Looks[rep.Looks-1]
	for _, row := range rep.Phases {
		if row.Unit != "sec/op" {
			continue
		}
		if row.Threshold == nil || *row.Threshold <= 0 || *row.Threshold > last.Threshold || row.Lo == nil || row.Hi == nil || row.MDE == nil || *row.Lo > *row.Hi {
			t.Errorf("row %s: threshold %v (one test's %v), interval [%v, %v], MDE %v", row.Phase, row.Threshold, last.Threshold, row.Lo, row.Hi, row.MDE)
		}
	}
	text, _, _ := perfbot(t, env.args("compare", "--repo", dir, "--base", sha, "--head", sha, "--seed", "4242", "--verbose")...)
	// The text report wraps its prose at 100 columns: read it unwrapped.
	if flat := strings.Join(strings.Fields(text), " "); !strings.Contains(flat, "seed 4242: --seed 4242 replays it") || !strings.Contains(flat, "one test needed p <") {
		t.Errorf("text report lacks the seed or the looks' thresholds:\n%s", text)
	}
}

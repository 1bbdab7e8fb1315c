package runner

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// A range of 16 commits none of which has a .perfbot.yml: bisect with a
// config from outside finds the first bad one; without it, it refuses
// before building anything, saying what to write.
func TestBisectWithAnExternalConfigWorksOnCommitsWithoutOne(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program at several commits and runs it: skipped in -short mode")
	}
	// Not parallel, as TestBisectFindsAPlantedRegressionAmong32CommitsWithFiveProbes.
	dir, shas := bisectRepoWith(t, "", 16, 9)
	r, db := newBisectRunner(t)
	_, err := r.Bisect(context.Background(), BisectRequest{Source: dir, Good: shas[0], Bad: shas[15]})
	if !errors.Is(err, ErrNoConfig) || !strings.Contains(err.Error(), "pass --config FILE") {
		t.Fatalf("bisect without any config: %v; want ErrNoConfig saying what to write", err)
	}
	if n := len(storedRuns(t, db, store.RunQuery{})); n != 0 {
		t.Fatalf("%d runs stored before the refusal", n)
	}
	ext, err := NewExternalConfig([]byte(bisectConfig), "work.yml (--config)")
	if err != nil {
		t.Fatal(err)
	}
	r.Config = ext
	res, err := r.Bisect(context.Background(), BisectRequest{Source: dir, Good: shas[0], Bad: shas[15]})
	if err != nil {
		t.Fatal(err)
	}
	if res.FirstBad.SHA != shas[9] || res.LastGood.SHA != shas[8] {
		t.Errorf("first bad %s after %s; want c9 %s after c8", res.FirstBad.Short(), res.LastGood.Short(), shas[9][:12])
	}
	if res.ConfigSource != "work.yml (--config)" {
		t.Errorf("config source %q", res.ConfigSource)
	}
}

func TestAnInvalidExternalConfigNamesItsSourceAndLine(t *testing.T) {
	t.Parallel()
	_, err := NewExternalConfig([]byte("count: 10\nbenchmarks:\n  - name: x\n    command: ./x\n"), "ci/x.yml (server config)")
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "ci/x.yml (server config)") || !strings.Contains(err.Error(), "line 4") {
		t.Errorf("%v; want ErrInvalidConfig naming the source and line 4", err)
	}
	_, err = ReadConfigFile("/nonexistent/perfbot.yml", "--config")
	if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "--config /nonexistent/perfbot.yml: no such file or directory") {
		t.Errorf("%v; want ErrInvalidConfig naming the flag and the file", err)
	}
}

// Backfill of a history none of whose commits has a .perfbot.yml: with a
// config from outside every commit is measured under it, each stored run
// with its hash; without one nothing is measured and it says why.
func TestBackfillWithAnExternalConfigMeasuresCommitsWithoutOne(t *testing.T) {
	t.Parallel()
	repo := workspacetest.New(t)
	var shas []string
	for i := range 3 {
		shas = append(shas, repo.Commit(t, fmt.Sprintf("c%d", i), map[string]string{"value": fmt.Sprintf("%d\n", 1000+i)}))
	}
	r, db := newBisectRunner(t)
	if _, err := r.Backfill(context.Background(), BackfillRequest{Source: repo.Dir}); !errors.Is(err, ErrNoConfig) {
		t.Fatalf("without a config: %v; want ErrNoConfig, which says what to write", err)
	}
	if n := len(storedRuns(t, db, store.RunQuery{})); n != 0 {
		t.Fatalf("without a config: %d runs stored", n)
	}
	ext, err := NewExternalConfig([]byte(valueConfig(1)), "value.yml (--config)")
	if err != nil {
		t.Fatal(err)
	}
	r.Config = ext
	res, err := r.Backfill(context.Background(), BackfillRequest{Source: repo.Dir})
	if err != nil {
		t.Fatal(err)
	}
	if res.Measured != 3 {
		t.Errorf("measured %d of 3 commits", res.Measured)
	}
	cfg, _ := ext.config()
	for _, sha := range shas {
		runs := storedRuns(t, db, store.RunQuery{Commits: []string{sha}, Kind: store.KindBaseline})
		if len(runs) != 1 || runs[0].ConfigHash != cfg.Hash() {
			t.Errorf("%s: %d baseline runs (%+v); want one under the external config's hash", sha[:7], len(runs), runs)
		}
	}
}

package runner

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/store"
)

// A range of 16 commits none of which has a .perfbot.yml: bisect with a
// config from outside finds the first bad one; without it, it refuses
// before building anything, saying what to write.
func TestBisectWithAnExternalConfigWorksOnCommitsWithoutOne(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a Go program at several commits and runs it: skipped in -short mode")
	}
	t.Parallel()
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

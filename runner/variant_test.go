package runner

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// slowBench prints phases a and b and their total; its first argument
// --slow makes b 20% slower (2400 ns instead of 2000), a not at all.
const slowBench = `b=2000; [ "$1" = --slow ] && b=2400
echo "BenchmarkX/phase=a 1 $((1000 + $$ % 7)) ns/op"
echo "BenchmarkX/phase=b 1 $((b + $$ % 7)) ns/op"
echo "BenchmarkX/phase=total 1 $((1000 + b + $$ % 11)) ns/op"`

// slowConfig runs slowBench (sh -c SCRIPT sh ARGS…, so appended arguments
// are $1…) and appends a line to buildLog at every build.
func slowConfig(buildLog string, count int) string {
	script, _ := json.Marshal(slowBench)
	build, _ := json.Marshal("echo built >> " + buildLog)
	return fmt.Sprintf("build:\n  - [sh, -c, %s]\nbenchmarks:\n  - name: sh\n    command: [sh, -c, %s, sh]\n"+
		"count: %d\nwarmup: 1\nmax_count: %d\ntimeout: 30s\n", build, script, count, count)
}

func TestCompareVariantsOfOneRevisionBuildOnceAndAreStoredApart(t *testing.T) {
	t.Parallel()
	buildLog := filepath.Join(t.TempDir(), "builds.log")
	config := slowConfig(buildLog, 6)
	repo := workspacetest.New(t)
	sha := repo.Commit(t, "slow variant", map[string]string{".perfbot.yml": config})
	r := newPRRunner(t)
	ctx := context.Background()

	res, err := r.Compare(ctx, CompareRequest{Source: repo.Dir, Base: sha, Head: sha, HeadArgs: []string{"--slow"}})
	if err != nil {
		t.Fatal(err)
	}
	rep := res.Report
	if rep.Verdict != analysis.VerdictRegression {
		t.Fatalf("verdict %s, want regression; warnings %v", rep.Verdict, rep.Warnings)
	}
	for _, row := range rep.Phases {
		if row.Unit != "sec/op" || row.Benchmark != "X" {
			continue
		}
		switch row.Phase {
		case "b":
			if row.Verdict != analysis.VerdictRegression || row.Change() < 19 || row.Change() > 21 {
				t.Errorf("b: %s %+.1f%%, want a regression of +20%%", row.Verdict, row.Change())
			}
		case "a":
			if row.Verdict != analysis.VerdictNoChange {
				t.Errorf("a: %s %+.1f%%, want no change", row.Verdict, row.Change())
			}
		}
	}
	if rep.Base != sha || rep.Head != sha || rep.BaseArgs != nil || !slices.Equal(rep.HeadArgs, []string{"--slow"}) {
		t.Errorf("report compares %s %q with %s %q", rep.Base, rep.BaseArgs, rep.Head, rep.HeadArgs)
	}
	for _, w := range rep.Warnings {
		if strings.Contains(w, "A/A") {
			t.Errorf("A/A warning for two variants: %s", w)
		}
	}
	if !strings.Contains(res.Markdown, "with `--slow`") || !strings.Contains(res.Markdown, "with no extra args") {
		t.Errorf("markdown does not name both sides' args:\n%s", res.Markdown)
	}

	// One revision, one build.
	if b, err := os.ReadFile(buildLog); err != nil || strings.Count(string(b), "built") != 1 {
		t.Errorf("build log %q (%v); want exactly one build", b, err)
	}

	// The base side stored the config as written (its hash, no variant),
	// the head side its variant: a config hash of its own, --slow
	// appended to the benchmark's args.
	written, err := ParseConfig([]byte(config))
	if err != nil {
		t.Fatal(err)
	}
	runs, err := r.Store.(*store.DB).Runs(ctx, store.RunQuery{Repo: repo.Dir, Commits: []string{sha}})
	if err != nil {
		t.Fatal(err)
	}
	byHash := map[string]int{}
	for _, run := range runs {
		v, err := StoredVariant(run.Config)
		if err != nil {
			t.Fatal(err)
		}
		var stored Config
		if err := json.Unmarshal([]byte(run.Config), &stored); err != nil {
			t.Fatal(err)
		}
		if stored.Hash() != run.ConfigHash {
			t.Errorf("run %d: stored config hashes to %.12s, stored hash %.12s", run.ID, stored.Hash(), run.ConfigHash)
		}
		switch {
		case run.ConfigHash == written.Hash() && v == nil:
		case run.ConfigHash != written.Hash() && slices.Equal(v, []string{"--slow"}) &&
			slices.Equal(stored.Benchmarks[0].Args, []string{"--slow"}):
		default:
			t.Errorf("run %d: config hash %.12s, variant %q, args %q; want the config as written or its --slow variant",
				run.ID, run.ConfigHash, v, stored.Benchmarks[0].Args)
		}
		byHash[run.ConfigHash]++
	}
	if len(runs) != 12 || len(byHash) != 2 || byHash[written.Hash()] != 6 {
		t.Errorf("%d runs under %d config hashes (%v); want 6 of each variant", len(runs), len(byHash), byHash)
	}

	// The same args on both sides of one revision compare nothing, and
	// store nothing.
	_, err = r.Compare(ctx, CompareRequest{Source: repo.Dir, Base: sha, Head: sha,
		BaseArgs: []string{"--slow"}, HeadArgs: []string{"--slow"}})
	if !errors.Is(err, ErrNothingToCompare) {
		t.Errorf("same args on one revision: %v, want ErrNothingToCompare", err)
	}
	if again, _ := r.Store.(*store.DB).Runs(ctx, store.RunQuery{Repo: repo.Dir}); len(again) != len(runs) {
		t.Errorf("%d runs stored after the refused comparison, want %d", len(again), len(runs))
	}
}

func TestWithVariantAppendsArgsAndChangesTheHashOnly(t *testing.T) {
	t.Parallel()
	cfg, err := ParseConfig([]byte(`benchmarks:
  - name: one
    command: [./bench]
    args: [--size, "2"]
    cpuprofile: --cpuprofile
  - name: two
    command: [./bench]
`))
	if err != nil {
		t.Fatal(err)
	}
	hash := cfg.Hash()
	if same, err := cfg.WithVariant(nil); err != nil || same != cfg {
		t.Errorf("WithVariant(nil) = %p, %v; want the config itself", same, err)
	}
	v, err := cfg.WithVariant([]string{"--lc-storage", "inline"})
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Hash() != hash || len(cfg.Benchmarks[0].Args) != 2 || cfg.Variant != nil {
		t.Errorf("WithVariant changed its receiver: args %q, variant %q", cfg.Benchmarks[0].Args, cfg.Variant)
	}
	if v.Hash() == hash {
		t.Error("the variant has the config's hash")
	}
	if got := v.Benchmarks[0].Args; !slices.Equal(got, []string{"--size", "2", "--lc-storage", "inline"}) {
		t.Errorf("benchmark one's args %q", got)
	}
	if got := v.Benchmarks[1].Args; !slices.Equal(got, []string{"--lc-storage", "inline"}) {
		t.Errorf("benchmark two's args %q", got)
	}
	other, _ := cfg.WithVariant([]string{"--lc-storage", "heap"})
	if other.Hash() == v.Hash() {
		t.Error("two variants share a hash")
	}
	data, _ := json.Marshal(v)
	if got, err := StoredVariant(string(data)); err != nil || !slices.Equal(got, v.Variant) {
		t.Errorf("StoredVariant = %q, %v; want %q", got, err, v.Variant)
	}
	data, _ = json.Marshal(cfg)
	if got, err := StoredVariant(string(data)); err != nil || got != nil || strings.Contains(string(data), "variant") {
		t.Errorf("config as written: StoredVariant = %q, %v; JSON %s", got, err, data)
	}
	// A variant may not take over what perfbot appends itself.
	if _, err := cfg.WithVariant([]string{"--cpuprofile", "x"}); !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), "cpuprofile") {
		t.Errorf("variant giving the cpuprofile flag: %v", err)
	}
}

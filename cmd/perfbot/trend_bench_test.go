package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// The history of BENCHMARKS.md's perfbot trend figures: 500 first-parent
// commits, 10 baseline runs of each on one machine, each run measuring
// one benchmark's 9 phases in sec/op (5,000 runs, 45,000 samples), with
// 2% noise and a +10% step in msm_h from commit trend500StepAt on.
const (
	trend500Commits = 500
	trend500Runs    = 10
	trend500StepAt  = 250
	trend500Repo    = "example.com/perfbot/prover500"
)

var trend500Phases = []string{"synthesis", "ntt", "msm_a", "msm_b1", "msm_b2", "msm_l", "msm_h", "assemble", "total"}

// BenchmarkTrend500 measures perfbot trend, whole (open the store, query,
// summarize, detect change points, render), on SQLite over that history,
// charting msm_h's 5,000 runs (--since all): as a table with commits in
// the order of their first runs, as a table ordered by --git (the
// first-parent history of a 500-commit repository made with git
// fast-import), as a png chart, and as a table with --alpha 0.001 (1,999
// permutations a test instead of 199). The store and the repository are
// made once, before the sub-benchmarks; each first checks that the
// command finds the step at commit 250.
func BenchmarkTrend500(b *testing.B) {
	git := workspacetest.New(b)
	shas := fastImportCommits(b, git, trend500Commits)
	db := filepath.Join(b.TempDir(), "perfbot.db")
	began := time.Now()
	saveTrend500(b, db, shas)
	b.Logf("stored %d runs of %d samples in %v", trend500Commits*trend500Runs, len(trend500Phases), time.Since(began).Round(time.Millisecond))

	args := func(extra ...string) []string {
		return append([]string{"trend", "--db", db, "--data-dir", b.TempDir(), "--repo", trend500Repo, "--quiet",
			"--benchmark", trendBench, "--phase", "msm_h", "--since", "all"}, extra...)
	}
	for _, tc := range []struct {
		name  string
		extra []string
	}{
		{"format=table", nil},
		{"format=table/order=git", []string{"--git", git.Dir}},
		{"format=png", []string{"--format", "png"}},
		{"format=table/alpha=0.001", []string{"--alpha", "0.001"}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			checkTrend500(b, args(append(tc.extra, "--format", "json")...))
			a := args(tc.extra...)
			var out, errb bytes.Buffer
			for b.Loop() {
				out.Reset()
				errb.Reset()
				if err := run(context.Background(), a, &out, &errb); err != nil {
					b.Fatalf("perfbot %s: %v\n%s", strings.Join(a, " "), err, errb.String())
				}
			}
			if out.Len() == 0 {
				b.Fatal("perfbot trend wrote nothing")
			}
		})
	}
}

// checkTrend500 runs perfbot trend with args (--format json) and fails b
// unless the trend has every commit and a change point at trend500StepAt.
func checkTrend500(b *testing.B, args []string) {
	b.Helper()
	var out, errb bytes.Buffer
	if err := run(context.Background(), args, &out, &errb); err != nil {
		b.Fatalf("perfbot %s: %v\n%s", strings.Join(args, " "), err, errb.String())
	}
	var t analysis.Trend
	if err := json.Unmarshal(out.Bytes(), &t); err != nil {
		b.Fatalf("perfbot trend --format json: %v", err)
	}
	if len(t.Commits) != trend500Commits {
		b.Fatalf("trend has %d commits; want %d", len(t.Commits), trend500Commits)
	}
	for _, c := range t.ChangePoints {
		if c.Index == trend500StepAt && c.Direction == string(analysis.VerdictRegression) {
			return
		}
	}
	b.Fatalf("no regression change point at commit %d; change points: %+v", trend500StepAt, t.ChangePoints)
}

// fastImportCommits makes n commits on r's main branch with git
// fast-import (one process; git commit would take n) and returns their
// SHAs, oldest first.
func fastImportCommits(b *testing.B, r *workspacetest.Repo, n int) []string {
	b.Helper()
	var stream bytes.Buffer
	when := workspacetest.Epoch.Unix()
	for i := range n {
		msg := fmt.Sprintf("commit %d\n", i)
		file := fmt.Sprintf("%d\n", i)
		fmt.Fprintf(&stream, "commit refs/heads/main\nmark :%d\n", i+1)
		fmt.Fprintf(&stream, "author Ada Author <ada@example.com> %d +0000\n", when+int64(i)*3600)
		fmt.Fprintf(&stream, "committer Cy Committer <cy@example.com> %d +0000\n", when+int64(i)*3600)
		fmt.Fprintf(&stream, "data %d\n%s", len(msg), msg)
		if i > 0 {
			fmt.Fprintf(&stream, "from :%d\n", i)
		}
		fmt.Fprintf(&stream, "M 644 inline n.txt\ndata %d\n%s\n", len(file), file)
	}
	cmd := exec.Command("git", "fast-import", "--quiet")
	cmd.Dir = r.Dir
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + b.TempDir(), "GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "LC_ALL=C"}
	cmd.Stdin = &stream
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	shas := strings.Fields(r.Git(b, "rev-list", "--first-parent", "--reverse", "HEAD"))
	if len(shas) != n {
		b.Fatalf("git fast-import made %d commits; want %d", len(shas), n)
	}
	return shas
}

// saveTrend500 stores the history's baseline runs of shas in the SQLite
// file db: trend500Runs runs of each commit, five minutes apart, commits
// two hours apart, in commit order.
func saveTrend500(b *testing.B, db string, shas []string) {
	b.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, db, store.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(500, 10))
	t0 := time.Date(2026, 6, 1, 9, 0, 0, 0, time.UTC)
	for i, sha := range shas {
		for j := range trend500Runs {
			start := t0.Add(time.Duration(i)*2*time.Hour + time.Duration(j)*5*time.Minute)
			r := &store.RunRecord{
				Repo: trend500Repo, Commit: store.Commit{SHA: sha, Subject: fmt.Sprintf("commit %d", i)}, Kind: store.KindBaseline,
				ConfigHash: "cfg", Machine: "gpu-1", StartedAt: start, EndedAt: start.Add(time.Minute), Status: analysis.StatusOK,
			}
			for p, phase := range trend500Phases {
				level := 0.05 * float64(p+1)
				if phase == "msm_h" && i >= trend500StepAt {
					level *= 1.1
				}
				r.Samples = append(r.Samples, analysis.Sample{
					Key:   analysis.Key{Benchmark: trendBench, Phase: phase, Unit: "sec/op"},
					Value: level * (1 + 0.02*(2*rng.Float64()-1)),
				})
			}
			if _, err := s.SaveRun(ctx, r); err != nil {
				b.Fatal(err)
			}
		}
	}
}

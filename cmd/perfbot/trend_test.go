package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
	"github.com/perfbot/perfbot/runner/workspace/workspacetest"
	"github.com/perfbot/perfbot/store"
)

// The trend fixture: a git repository whose main branch has 40
// first-parent commits (one of them merges a side branch's commit), and a
// SQLite store of their baseline runs with a +10% step in total sec/op
// planted at first-parent commit trendStepAt.
const (
	trendRepo   = "example.com/perfbot/prover"
	trendBench  = "Prove/circuit=sha256/constraints=65536/backend=cpu"
	trendStepAt = 25
	trendMerge  = 16 // the merge commit's first-parent index
	trendFew    = 7  // a commit with only 3 runs: no 95% interval
	trendLate   = 12 // a commit whose runs were stored after all others (a backfill)
)

var trendT0 = time.Date(2026, 11, 2, 9, 0, 0, 0, time.UTC)

type trendFixture struct {
	db   string // the SQLite file
	git  *workspacetest.Repo
	main []string // first-parent history, oldest first
	side string   // the side branch's commit, merged at trendMerge
}

// newTrendFixture makes the repository and the store: 6 runs on gpu-1
// per main commit (3 for trendFew), at 2-hour steps (trendLate's after
// all others), 6 runs of the side commit between main's 15 and 16, and 4
// runs of gpu-2, a faster-clocked host, on two commits. Each run measures
// total and msm_h in sec/op (0.5% noise; total +10% from trendStepAt,
// msm_h flat) and total in instructions/op.
func newTrendFixture(t testing.TB) *trendFixture {
	t.Helper()
	f := &trendFixture{db: filepath.Join(t.TempDir(), "perfbot.db"), git: workspacetest.New(t)}
	g := f.git
	for i := range 40 {
		switch i {
		case 15:
			g.Git(t, "switch", "--quiet", "-c", "side")
			f.side = g.Commit(t, "side: try a wider window", map[string]string{"side.txt": "s\n"})
			g.Git(t, "switch", "--quiet", "main")
		case trendMerge:
			g.Git(t, "merge", "--quiet", "--no-ff", "-m", "merge side", "side")
			g.Next = g.Next.Add(time.Hour)
			f.main = append(f.main, g.Git(t, "rev-parse", "HEAD"))
			continue
		}
		subject := fmt.Sprintf("commit %d", i)
		if i == trendStepAt {
			subject = "msm: slower bucket reduction"
		}
		f.main = append(f.main, g.Commit(t, subject, map[string]string{"n.txt": fmt.Sprintln(i)}))
	}

	ctx := context.Background()
	db, err := store.Open(ctx, f.db, store.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rng := rand.New(rand.NewPCG(7, 9))
	save := func(sha, machine string, at time.Time, n int, total float64) {
		t.Helper()
		for j := range n {
			// Rounded to the microsecond, so that the golden files do not
			// depend on how a platform rounds (or fuses) the arithmetic.
			noise := func(v float64) float64 { return math.Round(float64(v*(1+0.005*rng.NormFloat64()))*1e6) / 1e6 }
			start := at.Add(time.Duration(j) * 5 * time.Minute)
			_, err := db.SaveRun(ctx, &store.RunRecord{
				Repo: trendRepo, Commit: store.Commit{SHA: sha}, Kind: store.KindBaseline, ConfigHash: "cfg",
				Machine: machine, StartedAt: start, EndedAt: start.Add(time.Minute), Status: analysis.StatusOK,
				Samples: []analysis.Sample{
					{Key: analysis.Key{Benchmark: trendBench, Phase: "total", Unit: "sec/op"}, Value: noise(total)},
					{Key: analysis.Key{Benchmark: trendBench, Phase: "msm_h", Unit: "sec/op"}, Value: noise(0.25)},
					{Key: analysis.Key{Benchmark: trendBench, Phase: "total", Unit: "instructions/op"}, Value: 1.2e9},
				},
			})
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, sha := range f.main {
		at, n, total := trendT0.Add(time.Duration(i)*2*time.Hour), 6, 0.8
		if i >= trendStepAt {
			total = 0.88
		}
		if i == trendFew {
			n = 3
		}
		if i == trendLate {
			at = trendT0.Add(100 * time.Hour)
		}
		save(sha, "gpu-1", at, n, total)
		if i == 30 || i == 31 {
			save(sha, "gpu-2", at.Add(time.Hour), 2, total*0.7)
		}
	}
	save(f.side, "gpu-1", trendT0.Add(31*time.Hour), 6, 0.8)
	return f
}

// args returns perfbot trend's arguments on the fixture's store, then
// extra.
func (f *trendFixture) args(extra ...string) []string {
	return append([]string{"trend", "--db", f.db, "--repo", trendRepo, "--benchmark", trendBench, "--phase", "total",
		"--since", "2026-11-01"}, extra...)
}

// trend runs perfbot trend and fails the test unless it succeeds.
func (f *trendFixture) trend(t *testing.T, extra ...string) string {
	t.Helper()
	out, errOut, code := perfbot(t, f.args(extra...)...)
	if code != 0 {
		t.Fatalf("perfbot %s: exit %d\n%s", strings.Join(extra, " "), code, errOut)
	}
	return out
}

func (f *trendFixture) trendJSON(t *testing.T, extra ...string) *analysis.Trend {
	t.Helper()
	out := f.trend(t, append([]string{"--format", "json"}, extra...)...)
	var tr analysis.Trend
	if err := json.Unmarshal([]byte(out), &tr); err != nil {
		t.Fatalf("trend JSON: %v\n%s", err, out)
	}
	return &tr
}

func TestTrend(t *testing.T) {
	t.Parallel()
	start := time.Now()
	f := newTrendFixture(t)
	t.Logf("fixture: 40 commits, %d runs, in %v", 40*6-3+6+4, time.Since(start).Round(time.Millisecond))

	t.Run("FirstParentOrderLeavesOutTheSideCommitAndFindsThePlantedStep", func(t *testing.T) {
		t.Parallel()
		tr := f.trendJSON(t, "--git", f.git.Dir)
		if tr.Order != analysis.OrderFirstParent || tr.Head != f.main[39] {
			t.Errorf("order %q head %s, want first-parent of %s", tr.Order, tr.Head, f.main[39])
		}
		if len(tr.Commits) != 40 {
			t.Fatalf("%d commits, want the 40 on main's first-parent history", len(tr.Commits))
		}
		for i, c := range tr.Commits {
			if c.Commit != f.main[i] || c.Index != i {
				t.Fatalf("commit %d is %s (index %d), want %s: not in first-parent order", i, c.Commit, c.Index, f.main[i])
			}
		}
		if len(tr.LeftOut) != 1 || tr.LeftOut[0] != f.side {
			t.Errorf("left out %v, want the side commit %s", tr.LeftOut, f.side)
		}
		if len(tr.ChangePoints) != 1 {
			t.Fatalf("change points %+v, want one", tr.ChangePoints)
		}
		cp := tr.ChangePoints[0]
		if cp.Index != trendStepAt || cp.Commit != f.main[trendStepAt] || !tr.Commits[trendStepAt].ChangePoint {
			t.Errorf("change point at %d (%s), want the planted step at %d (%s)", cp.Index, cp.Commit, trendStepAt, f.main[trendStepAt])
		}
		if math.Abs(cp.ChangePct-10) > 1 || math.Abs(cp.Before-0.8) > 0.005 || math.Abs(cp.After-0.88) > 0.005 ||
			cp.Direction != "regression" || cp.PValue > 0.01 {
			t.Errorf("change point %+v: want 0.8 → 0.88 s, +10%% regression, p ≤ 0.01", cp)
		}
		if c := tr.Commits[trendStepAt]; c.Subject != "msm: slower bucket reduction" || c.Runs != 6 {
			t.Errorf("planted commit %+v: want its subject from git and 6 runs", c)
		}
		few := tr.Commits[trendFew]
		if few.Runs != 3 || !math.IsInf(few.Lo, -1) || !math.IsInf(few.Hi, 1) {
			t.Errorf("commit with 3 runs: %+v; want no interval (null lo, hi)", few)
		}
		c0 := tr.Commits[0]
		if !(c0.Lo < c0.Median && c0.Median < c0.Hi) || math.Abs(c0.Median-0.8) > 0.01 || c0.Runs != 6 {
			t.Errorf("commit 0: %+v; want a median near 0.8 s inside its interval", c0)
		}
		if tr.Machine != "gpu-1" || len(tr.Machines) != 2 || tr.Machines[1] != (analysis.TrendMachine{Machine: "gpu-2", Runs: 4, Commits: 2}) {
			t.Errorf("machine %q of %+v; want gpu-1 charted, gpu-2 (4 runs, 2 commits) named", tr.Machine, tr.Machines)
		}
		if len(tr.Segments) != 2 || tr.Segments[0].End != trendStepAt || tr.Segments[1].Start != trendStepAt {
			t.Errorf("segments %+v, want [0,%d) and [%d,40)", tr.Segments, trendStepAt, trendStepAt)
		}
	})

	t.Run("WithoutGitCommitsAreInTheOrderOfTheirFirstRunsAndTheOutputSaysSo", func(t *testing.T) {
		t.Parallel()
		tr := f.trendJSON(t)
		if tr.Order != analysis.OrderFirstRun || len(tr.Commits) != 41 || len(tr.LeftOut) != 0 {
			t.Fatalf("order %q, %d commits, left out %v; want first-run order of all 41 commits", tr.Order, len(tr.Commits), tr.LeftOut)
		}
		// Main's 12 moved to the end: the side commit, run between main's
		// 15 and 16, is 15th.
		if tr.Commits[15].Commit != f.side || tr.Commits[40].Commit != f.main[trendLate] {
			t.Errorf("commits 15 and 40 are %s and %s, want the side commit %s and the backfilled %s",
				tr.Commits[15].Commit, tr.Commits[40].Commit, f.side, f.main[trendLate])
		}
		if len(tr.ChangePoints) != 1 || tr.ChangePoints[0].Commit != f.main[trendStepAt] {
			t.Errorf("change points %+v, want one on %s", tr.ChangePoints, f.main[trendStepAt])
		}
		if len(tr.Notes) == 0 || !strings.Contains(tr.Notes[0], "order of their first runs") || !strings.Contains(tr.Notes[0], "--git") {
			t.Errorf("notes %q: want the first to say the order and how to get history order", tr.Notes)
		}
	})

	t.Run("AFlatPhaseHasNoChangePoint", func(t *testing.T) {
		t.Parallel()
		tr := f.trendJSON(t, "--phase", "msm_h", "--git", f.git.Dir)
		if len(tr.Commits) != 40 || len(tr.ChangePoints) != 0 {
			t.Errorf("msm_h: %d commits, change points %+v; want 40 and none", len(tr.Commits), tr.ChangePoints)
		}
	})

	t.Run("FullBenchmarkNameSetsThePhase", func(t *testing.T) {
		t.Parallel()
		out, errOut, code := perfbot(t, "trend", "--db", f.db, "--repo", trendRepo, "--since", "all", "--format", "csv",
			"--benchmark", "Benchmark"+trendBench+"/phase=msm_h")
		if code != 0 || !strings.HasPrefix(out, strings.Join(render.TrendCSVHeader, ",")+"\n") || strings.Count(out, "\n") != 42 {
			t.Errorf("exit %d, stderr %q; output:\n%s\nwant the CSV header and 41 commits", code, errOut, out)
		}
	})

	t.Run("MachinePicksAnotherSeries", func(t *testing.T) {
		t.Parallel()
		tr := f.trendJSON(t, "--machine", "gpu-2")
		if tr.Machine != "gpu-2" || len(tr.Commits) != 2 || tr.Commits[0].Commit != f.main[30] || tr.Commits[0].Runs != 2 {
			t.Errorf("--machine gpu-2: machine %q, commits %+v; want the two commits gpu-2 ran, 2 runs each", tr.Machine, tr.Commits)
		}
		if len(tr.ChangePoints) != 0 || !strings.Contains(strings.Join(tr.Notes, " "), "at least 10 commits") {
			t.Errorf("2 commits: change points %v, notes %q; want none and a note that says why", tr.ChangePoints, tr.Notes)
		}
	})

	t.Run("TableAndCSVAndJSONMatchGolden", func(t *testing.T) {
		t.Parallel()
		// The commits' SHAs are fixed: workspacetest commits with fixed
		// names and dates.
		golden(t, "trend-table", f.trend(t, "--git", f.git.Dir))
		golden(t, "trend-csv", f.trend(t, "--git", f.git.Dir, "--format", "csv"))
		golden(t, "trend-json", f.trend(t, "--git", f.git.Dir, "--format", "json"))
		golden(t, "trend-table-first-run", f.trend(t))
	})

	t.Run("OutWritesTheFileAndNothingOnStdout", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "trend.csv")
		if out := f.trend(t, "--format", "csv", "--out", path); out != "" {
			t.Errorf("stdout %q, want nothing", out)
		}
		b, err := os.ReadFile(path)
		if err != nil || !bytes.HasPrefix(b, []byte("index,commit,")) {
			t.Errorf("--out file: %v\n%s", err, b)
		}
	})

	t.Run("SVGIsWellFormedWithOneMarkerPerChangePoint", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			args    []string
			markers int
		}{
			{[]string{"--git", f.git.Dir}, 1},
			{[]string{"--git", f.git.Dir, "--min-change", "0.5"}, 0}, // the 10% step is below a 50% minimum
			{[]string{"--git", f.git.Dir, "--phase", "msm_h"}, 0},
		} {
			svg := f.trend(t, append([]string{"--format", "svg"}, tc.args...)...)
			st := svgStats(t, svg)
			// Each marker is a line and a label in the marker color; the
			// legend shows one more line when there are markers.
			wantPaths := tc.markers
			if tc.markers > 0 {
				wantPaths++
			}
			if st.root != "svg" || st.markerTexts != tc.markers || st.markerPaths != wantPaths {
				t.Errorf("%v: root <%s>, %d marker labels and %d marker paths; want <svg>, %d and %d",
					tc.args, st.root, st.markerTexts, st.markerPaths, tc.markers, wantPaths)
			}
			if label := f.main[trendStepAt][:7] + " +"; tc.markers > 0 && !strings.Contains(st.text, label) {
				t.Errorf("%v: no label %q… on the change point in the SVG's text %q", tc.args, label, st.text)
			}
			if !strings.Contains(st.text, "ms/op") || !strings.Contains(st.text, f.main[0][:7]) {
				t.Errorf("%v: SVG text %q: want the y axis in ms/op and short SHAs on the x axis", tc.args, st.text)
			}
			// The title names the unit the axis shows, not the stored one.
			if strings.Contains(st.text, "sec/op") {
				t.Errorf("%v: SVG text %q names sec/op beside an axis in ms/op", tc.args, st.text)
			}
		}
	})

	t.Run("PNGDecodesAtTheRequestedSize", func(t *testing.T) {
		t.Parallel()
		path := filepath.Join(t.TempDir(), "trend.png")
		f.trend(t, "--git", f.git.Dir, "--format", "png", "--size", "640x360", "--out", path)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("decode PNG: %v", err)
		}
		if r := img.Bounds(); r.Dx() != 640 || r.Dy() != 360 {
			t.Errorf("PNG is %dx%d, want 640x360", r.Dx(), r.Dy())
		}
		// Not blank: the marker's red is drawn.
		red := 0
		for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
			for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
				r, g, b, _ := img.At(x, y).RGBA()
				if r>>8 == 0xd6 && g>>8 == 0x27 && b>>8 == 0x28 {
					red++
				}
			}
		}
		if red < 100 {
			t.Errorf("%d pixels in the change-point red, want a vertical line's worth (at least 100)", red)
		}
	})

	t.Run("BadInputExitsTwoSaysWhatIsWrongAndWritesNothing", func(t *testing.T) {
		t.Parallel()
		notRepo := t.TempDir()
		base := []string{"trend", "--db", f.db, "--repo", trendRepo, "--since", "all"}
		bench := []string{"--benchmark", trendBench}
		cases := []struct {
			args []string
			want []string
		}{
			{append(bench, "--phase", "total", "--format", "xml"), []string{`unknown --format "xml": allowed values are table, csv, json, svg, png`}},
			{append(bench, "--phase", "total", "--since", "3 months"), []string{`--since "3 months"`, "90d"}},
			{append(bench, "--phase", "total", "--since", "-5d"), []string{`--since "-5d"`}},
			{append(bench, "--phase", "total", "--since", "2027-01-01"), []string{"no baseline runs of", "since 2027-01-01", "the newest of its 247 runs is from 2026-11-06", "--since all"}},
			{[]string{"--phase", "total"}, []string{"--benchmark is required"}},
			{bench, []string{"--phase is required"}},
			{append(bench, "--phase", "ntt"), []string{`has no phase "ntt"`, `"msm_h", "total"`}},
			{append(bench, "--phase", "total", "--unit", "B/op"), []string{`no B/op values`, `"instructions/op", "sec/op"`}},
			{[]string{"--benchmark", "Prove/circuit=sha256", "--phase", "total"}, []string{`no baseline runs of benchmark "Prove/circuit=sha256"`, `"` + trendBench + `"`}},
			{append(bench, "--phase", "total", "--repo", "example.com/nope"), []string{`no baseline runs of repository "example.com/nope"`, "--repo"}},
			{append(bench, "--phase", "total", "--git", notRepo), []string{"--git " + notRepo + " is not a git repository (git finds no repository there)"}},
			{append(bench, "--phase", "total", "--git", filepath.Join(notRepo, "gone")), []string{"is not a git repository (no such directory)"}},
			{append(bench, "--phase", "total", "--git", "https://github.com/perfbot/prover.git"), []string{"want the directory of a local clone"}},
			{append(bench, "--phase", "total", "--machine", "gpu-9"), []string{`unknown machine "gpu-9"`, `"gpu-1" (243 runs), "gpu-2" (4 runs)`}},
			{append(bench, "--phase", "total", "--alpha", "2"), []string{"--alpha 2: want a significance level"}},
			{append(bench, "--phase", "total", "--min-change", "5"), []string{"--min-change 5: that is 500%"}},
			{append(bench, "--phase", "total", "--min-segment", "1"), []string{"--min-segment 1: want at least 2"}},
			{append(bench, "--phase", "total", "--format", "png", "--size", "big"), []string{`--size "big": want WIDTHxHEIGHT`}},
			{append(bench, "--phase", "total", "--size", "800x400"), []string{"--size sets a chart's size"}},
			{append(bench, "--phase", "msm_h", "--benchmark", trendBench+"/phase=total"), []string{"give the phase once"}},
		}
		for _, tc := range cases {
			dir := t.TempDir()
			args := append(append(slicesClone(base), tc.args...), "--out", filepath.Join(dir, "out"))
			out, errOut, code := perfbot(t, args...)
			if code != exitUsage {
				t.Errorf("%v: exit %d, want %d (stderr %q)", tc.args, code, exitUsage, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(errOut, w) {
					t.Errorf("%v: stderr %q; want it to say %q", tc.args, errOut, w)
				}
			}
			if !strings.Contains(errOut, "Run 'perfbot trend --help' for usage.") {
				t.Errorf("%v: stderr %q does not point at --help", tc.args, errOut)
			}
			if entries, _ := os.ReadDir(dir); out != "" || len(entries) != 0 {
				t.Errorf("%v: wrote stdout %q and files %v; want nothing", tc.args, out, entries)
			}
		}
	})
}

func slicesClone(s []string) []string { return append([]string(nil), s...) }

type svgCounts struct {
	root                     string
	markerPaths, markerTexts int
	text                     string // every text element's content, space-separated
}

// svgStats parses an SVG as XML (failing the test unless it is
// well-formed) and counts the elements drawn in the change-point color.
func svgStats(t *testing.T, svg string) svgCounts {
	t.Helper()
	var st svgCounts
	var texts []string
	d := xml.NewDecoder(strings.NewReader(svg))
	inText := false
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if st.root == "" {
				st.root = e.Name.Local
			}
			var style string
			for _, a := range e.Attr {
				if a.Name.Local == "style" {
					style = a.Value
				}
			}
			switch e.Name.Local {
			case "path":
				if strings.Contains(style, "stroke:#D62728") {
					st.markerPaths++
				}
			case "text":
				inText = true
				if strings.Contains(style, "fill:#D62728") {
					st.markerTexts++
				}
			}
		case xml.EndElement:
			inText = false
		case xml.CharData:
			if inText {
				texts = append(texts, string(e))
			}
		}
	}
	st.text = strings.Join(texts, " ")
	return st
}

func TestTrendHelpMatchesGolden(t *testing.T) {
	t.Parallel()
	out, errOut, code := perfbot(t, "trend", "--help")
	if code != 0 || errOut != "" {
		t.Fatalf("exit %d, stderr %q", code, errOut)
	}
	golden(t, "help-trend", out)
}

func TestParseSinceTakesDurationsDatesAndAll(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC)
	for in, want := range map[string]time.Time{
		"90d":                  now.Add(-90 * 24 * time.Hour),
		"12w":                  now.Add(-12 * 7 * 24 * time.Hour),
		"36h":                  now.Add(-36 * time.Hour),
		"1.5d":                 now.Add(-36 * time.Hour),
		"90m":                  now.Add(-90 * time.Minute),
		"2026-01-31":           time.Date(2026, 1, 31, 0, 0, 0, 0, time.UTC),
		"2026-01-31T10:00:00Z": time.Date(2026, 1, 31, 10, 0, 0, 0, time.UTC),
		"all":                  {},
	} {
		got, err := parseSince(in, now)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseSince(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "90", "d", "0d", "-3d", "3 months", "2026-13-01", "99999999999w"} {
		if got, err := parseSince(in, now); err == nil {
			t.Errorf("parseSince(%q) = %v, want an error", in, got)
		}
	}
}

func TestStoredRepoNameIsTheCloneTopOrTheNameAsGiven(t *testing.T) {
	t.Parallel()
	r := workspacetest.New(t)
	r.Commit(t, "one", map[string]string{"sub/a.txt": "a\n"})
	top, err := filepath.EvalSymlinks(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]string{
		r.Dir:                                   top,
		filepath.Join(r.Dir, "sub"):             top,
		"https://github.com/perfbot/prover.git": "https://github.com/perfbot/prover.git",
		"git@github.com:perfbot/prover.git":     "git@github.com:perfbot/prover.git",
		"/no/such/dir":                          "/no/such/dir",
		"example.com/perfbot/prover":            "example.com/perfbot/prover",
	} {
		if got := storedRepoName(in); got != want {
			t.Errorf("storedRepoName(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkTrend measures perfbot trend --format table on the fixture's
// store (40 commits, 250 runs), whole: open the store, query, summarize,
// detect, render.
func BenchmarkTrend(b *testing.B) {
	f := newTrendFixture(b)
	for _, format := range []string{"table", "svg", "png"} {
		b.Run("format="+format, func(b *testing.B) {
			args := f.args("--format", format)
			for b.Loop() {
				var out, errb bytes.Buffer
				if err := run(context.Background(), args, &out, &errb); err != nil {
					b.Fatal(err, errb.String())
				}
			}
		})
	}
}

package analysis_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// checkGolden compares got with testdata/name, or rewrites it with -update.
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./analysis -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./analysis -update and review the diff\n--- got ---\n%s", path, got)
	}
}

func TestGoldenReportIsTheIntendedScenario(t *testing.T) {
	// The golden files are only worth reviewing if the report they print
	// says what the input plants.
	t.Parallel()
	r := analysis.GoldenReport()
	if r.Verdict != analysis.VerdictRegression || analysis.Find(r, "msm_h").Verdict != analysis.VerdictRegression {
		t.Errorf("verdict %s, msm_h %s; want regressions", r.Verdict, analysis.Find(r, "msm_h").Verdict)
	}
	if f := analysis.Find(r, "synthesis").Floor; f.Source != analysis.FloorFromHistory || f.Pairs != 12 {
		t.Errorf("synthesis floor %+v, want learned from 12 pairs", f)
	}
	if r.Runs.Head.Failed[analysis.StatusCrashed] != 2 || len(r.OnlyHead) != 1 || len(r.EnvDiffers) != 1 {
		t.Errorf("runs %+v, only head %v, env differs %v", r.Runs.Head, r.OnlyHead, r.EnvDiffers)
	}
	// The profile diff lists what grew beyond noise, split and memmove,
	// flat and cum; not addMixed's +0.8 pp, nor msmG1's.
	names := func(fs []analysis.FuncShare) string {
		var out []string
		for _, f := range fs {
			out = append(out, analysis.ShortFuncName(f.Name))
		}
		return strings.Join(out, ",")
	}
	d := r.ProfileDiffs[0]
	if got, want := names(d.Flat), "prover/groth16.split[...],runtime.memmove"; got != want {
		t.Errorf("flat lists %s, want %s", got, want)
	}
	if got, want := names(d.Cum), "prover/groth16.split[...],runtime.memmove"; got != want {
		t.Errorf("cum lists %s, want %s", got, want)
	}
}

func TestRenderMarkdownGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := render.RenderMarkdown(&b, analysis.GoldenReport(), render.RenderContext{DetailsURL: "https://perfbot.example/compare/1111111..2222222"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.md", b.Bytes())
	if !strings.HasPrefix(b.String(), render.SummaryMarker+"\n") {
		t.Errorf("comment does not start with %s", render.SummaryMarker)
	}
}

func TestRenderMarkdownErrorGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := render.RenderMarkdown(&b, analysis.ErrorReport(), render.RenderContext{Command: "go run ./cmd/perfbot"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report-error.md", b.Bytes())
}

func TestRenderTextGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := render.RenderText(&b, analysis.GoldenReport()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.txt", b.Bytes())
	// Function names such as "(*G1Jac).Add" hold a lone *; bold would
	// take two.
	if strings.ContainsAny(b.String(), "|`") || strings.Contains(b.String(), "**") {
		t.Error("the terminal rendering contains Markdown")
	}
}

func TestRenderJSONGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := render.RenderJSON(&b, analysis.GoldenReport()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.json", b.Bytes())
}

func TestReportJSONRoundTripsIncludingInfiniteBounds(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(44, 0.004)
	// 4 runs a side: the medians' intervals are infinite, so the JSON has
	// nulls that must decode back to ±∞.
	small := analysis.Compare(analysis.Input{Base: g.Runs(analysis.BaseRev, 4, nil), Head: g.Runs(analysis.HeadRev, 4, nil)}, analysis.DefaultOptions())
	if !math.IsInf(small.Phases[0].Base.Lo, -1) {
		t.Fatalf("4 runs: lo = %g, want −∞", small.Phases[0].Base.Lo)
	}
	for _, r := range []*analysis.Report{analysis.GoldenReport(), small, analysis.ErrorReport()} {
		var first bytes.Buffer
		if err := render.RenderJSON(&first, r); err != nil {
			t.Fatal(err)
		}
		var decoded analysis.Report
		if err := json.Unmarshal(first.Bytes(), &decoded); err != nil {
			t.Fatal(err)
		}
		var second, md1, md2 bytes.Buffer
		if err := render.RenderJSON(&second, &decoded); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Errorf("JSON does not round-trip:\n%s\n---\n%s", first.Bytes(), second.Bytes())
		}
		_ = render.RenderMarkdown(&md1, r, render.RenderContext{})
		_ = render.RenderMarkdown(&md2, &decoded, render.RenderContext{})
		if md1.String() != md2.String() {
			t.Errorf("the decoded report renders differently")
		}
	}
	if !bytes.Contains(mustJSON(t, small), []byte(`"lo": null`)) {
		t.Error("infinite bounds are not written as null")
	}
}

func mustJSON(t *testing.T, r *analysis.Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := render.RenderJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestRenderedRowsWithTooFewRunsShowNoPValue(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(45, 0.004)
	r := analysis.Compare(analysis.Input{Base: g.Runs(analysis.BaseRev, 4, nil), Head: g.Runs(analysis.HeadRev, 4, nil)}, analysis.DefaultOptions())
	var b bytes.Buffer
	if err := render.RenderMarkdown(&b, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| `msm_h` | ") || !strings.Contains(b.String(), " | — | 1.0% | inconclusive: too few runs |") || strings.Contains(b.String(), "∞") {
		t.Errorf("untested rows should show no p-value, and no interval should be infinite:\n%s", b.String())
	}
}

func TestHeadlineIsPlainTextWithTheVerdict(t *testing.T) {
	t.Parallel()
	got := render.Headline(analysis.GoldenReport())
	if want := "Regression. Head is worse than base in msm_h +20.4%, total +3.3%."; got != want {
		t.Errorf("Headline = %q, want %q", got, want)
	}
	if strings.ContainsAny(got, "`\n") {
		t.Errorf("Headline = %q; want one plain-text line", got)
	}
	if got := render.Headline(analysis.ErrorReport()); !strings.HasPrefix(got, "Error. ") {
		t.Errorf("Headline(error report) = %q; want it to start with the verdict", got)
	}
}

// TestVariantsOfOneRevisionAreNamedAndNotAA: one revision run with two
// flag sets is an A/B comparison: no A/A warning, every rendering names
// each side's arguments, and the benchstat recipe exports each variant.
func TestVariantsOfOneRevisionAreNamedAndNotAA(t *testing.T) {
	t.Parallel()
	g := analysis.NewSynth(7, 0.004)
	in := analysis.Input{
		BaseRev: analysis.BaseRev, HeadRev: analysis.BaseRev,
		HeadArgs: []string{"--lc-storage", "inline"},
		Base:     g.Runs(analysis.BaseRev, 12, nil),
		Head:     g.Runs(analysis.BaseRev, 12, map[string]float64{"synthesis": 1.2}),
	}
	r := analysis.Compare(in, analysis.DefaultOptions())
	if r.Verdict != analysis.VerdictRegression {
		t.Errorf("verdict %s, want the planted regression", r.Verdict)
	}
	if analysis.HasWarning(r, "A/A") {
		t.Errorf("A/A warning for two variants of one revision: %v", r.Warnings)
	}
	var text, md, js bytes.Buffer
	if err := render.RenderText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if err := render.RenderJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`(?m)^base\s+1111111 with no extra args\s+12 runs`, `(?m)^head\s+1111111 with --lc-storage inline\s+12 runs`} {
		if !regexp.MustCompile(want).MatchString(text.String()) {
			t.Errorf("text report does not match %s:\n%s", want, text.String())
		}
	}
	for _, want := range []string{
		"Base `1111111` with no extra args (12 runs, 12 ok) vs head `1111111` with `--lc-storage inline` (12 runs, 12 ok).",
		"export --rev " + analysis.BaseRev + " --kind compare --per-run > base.txt",
		"export --rev " + analysis.BaseRev + " --args '--lc-storage inline' --kind compare --per-run > head.txt",
		"benchstat -row /phase base.txt head.txt",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown report lacks %q:\n%s", want, md.String())
		}
	}
	var back analysis.Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.BaseArgs != nil || strings.Join(back.HeadArgs, " ") != "--lc-storage inline" || !strings.Contains(js.String(), `"head_args": [`) {
		t.Errorf("JSON args: base %q head %q\n%s", back.BaseArgs, back.HeadArgs, js.String())
	}

	// The same revision with the same arguments is still A/A.
	in.BaseArgs = in.HeadArgs
	if r := analysis.Compare(in, analysis.DefaultOptions()); !analysis.HasWarning(r, "A/A") {
		t.Errorf("same revision, same args: no A/A warning: %v", r.Warnings)
	}
}

// unwrapped joins a text report's wrapped lines: its words with single
// spaces, for finding a phrase wherever the width broke it.
func unwrapped(s string) string { return strings.Join(strings.Fields(s), " ") }

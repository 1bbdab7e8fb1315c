package analysis

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
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// goldenInput is a fixed comparison that exercises every part of a
// rendering: a regression in msm_h (time and instructions), failed head
// runs, learned and minimum floors, a series only head measured, and a
// GPU driver that differs.
func goldenInput() Input {
	g := newSynth(42, 0.004)
	g.uniform = true
	g.instructions = true
	base := g.runs(baseRev, 12, nil)
	head := g.runs(headRev, 12, map[string]float64{"msm_h": 1.2})
	for i := range head {
		head[i].Samples = append(head[i].Samples, Sample{Key{proveBench, "msm_h/step=scatter", "sec/op"}, 0.021 * g.jitter()})
	}
	head = append(head[:6], append(failed(headRev, 2, StatusCrashed,
		"exit status 2\ngoroutine 1 [running]:\nmain.main()\n\t/src/prover/groth16.go:88\npanic: cuda: out of memory (code 2)"), head[6:]...)...)
	hist := History{}
	for _, p := range []string{"synthesis", "msm_h", "total"} {
		var vs []float64
		v := 1.0
		for i := range 13 {
			vs = append(vs, v)
			v *= 1 + 0.002*float64(i%5+1)*float64(1-2*(i%2))
		}
		hist[Key{proveBench, p, "sec/op"}] = vs
	}
	return Input{
		BaseRev: baseRev, HeadRev: headRev,
		Base: base, Head: head,
		History: hist,
		BaseEnv: Env{"cpu": "AMD EPYC 9654 96-Core", "gpu": "NVIDIA H200", "gpu-driver": "580.159.04", "go": "go1.26.8"},
		HeadEnv: Env{"cpu": "AMD EPYC 9654 96-Core", "gpu": "NVIDIA H200", "gpu-driver": "580.126.09", "go": "go1.26.8"},
	}
}

// goldenReport is the comparison of goldenInput, with msm_h's regression
// explained by a CPU profile diff made from counts made up for the golden
// files (Compare makes real ones from the runs' profiles, which
// goldenInput has none of) and by its instructions/op row.
func goldenReport() *Report {
	r := Compare(goldenInput(), DefaultOptions())
	d := goldenProfileDiff()
	d.Benchmark = proveBench
	r.ProfileDiffs = []ProfileDiff{d}
	r.Explanations = Explain(r.Phases, r.ProfileDiffs)
	return r
}

// goldenProfileDiff is msm_h's CPU profile diff for the golden files,
// from 12 profiles a side of 4180 and 5035 samples of 10 ms. split and
// memmove grew by far more than noise; addMixed (41.2% → 42.0%) and
// msmG1's cumulative share (96.3% → 97.1%) grew by less, and are not
// listed.
func goldenProfileDiff() ProfileDiff {
	const (
		split    = "github.com/perfbot/perfbot/prover/groth16.split[...]"
		msmG1    = "github.com/perfbot/perfbot/prover/groth16.msmG1"
		addMixed = "github.com/consensys/gnark-crypto/ecc/bls12-381.(*g1JacExtended).addMixed"
		memmove  = "runtime.memmove"
		mainMain = "main.main"
	)
	side := func(samples int64, flat, cum map[string]int64) phaseTally {
		t := phaseTally{profiles: 12, unit: "nanoseconds", samples: samples, value: samples * 10_000_000,
			flat: newFuncTally(), cum: newFuncTally()}
		for name, n := range flat {
			t.flat.add(name, n*10_000_000, n)
		}
		for name, n := range cum {
			t.cum.add(name, n*10_000_000, n)
		}
		return t
	}
	base := side(4180,
		map[string]int64{split: 130, memmove: 33, addMixed: 1722, msmG1: 2295},
		map[string]int64{split: 167, memmove: 33, addMixed: 1722, msmG1: 4025, mainMain: 4180})
	head := side(5035,
		map[string]int64{split: 493, memmove: 146, addMixed: 2115, msmG1: 2281},
		map[string]int64{split: 634, memmove: 146, addMixed: 2115, msmG1: 4889, mainMain: 5035})
	return diffTallies("msm_h", ProfileOptions{}.withDefaults(), base, head)
}

// errorReport is a comparison whose head never built.
func errorReport() *Report {
	g := newSynth(43, 0.004)
	return Compare(Input{
		BaseRev: baseRev, HeadRev: headRev,
		Base: g.runs(baseRev, 6, nil),
		Head: failed(headRev, 3, StatusBuildFailed, "prover/msm.go:12:2: undefined: bucketSort"),
	}, DefaultOptions())
}

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
	r := goldenReport()
	if r.Verdict != VerdictRegression || find(r, "msm_h").Verdict != VerdictRegression {
		t.Errorf("verdict %s, msm_h %s; want regressions", r.Verdict, find(r, "msm_h").Verdict)
	}
	if f := find(r, "synthesis").Floor; f.Source != FloorFromHistory || f.Pairs != 12 {
		t.Errorf("synthesis floor %+v, want learned from 12 pairs", f)
	}
	if r.Runs.Head.Failed[StatusCrashed] != 2 || len(r.OnlyHead) != 1 || len(r.EnvDiffers) != 1 {
		t.Errorf("runs %+v, only head %v, env differs %v", r.Runs.Head, r.OnlyHead, r.EnvDiffers)
	}
	// The profile diff lists what grew beyond noise, split and memmove,
	// flat and cum; not addMixed's +0.8 pp, nor msmG1's.
	names := func(fs []FuncShare) string {
		var out []string
		for _, f := range fs {
			out = append(out, shortFuncName(f.Name))
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
	if err := RenderMarkdown(&b, goldenReport(), RenderContext{DetailsURL: "https://perfbot.example/compare/1111111..2222222"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.md", b.Bytes())
	if !strings.HasPrefix(b.String(), SummaryMarker+"\n") {
		t.Errorf("comment does not start with %s", SummaryMarker)
	}
}

func TestRenderMarkdownErrorGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := RenderMarkdown(&b, errorReport(), RenderContext{Command: "go run ./cmd/perfbot"}); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report-error.md", b.Bytes())
}

func TestRenderTextGolden(t *testing.T) {
	t.Parallel()
	var b bytes.Buffer
	if err := RenderText(&b, goldenReport()); err != nil {
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
	if err := RenderJSON(&b, goldenReport()); err != nil {
		t.Fatal(err)
	}
	checkGolden(t, "report.json", b.Bytes())
}

func TestReportJSONRoundTripsIncludingInfiniteBounds(t *testing.T) {
	t.Parallel()
	g := newSynth(44, 0.004)
	// 4 runs a side: the medians' intervals are infinite, so the JSON has
	// nulls that must decode back to ±∞.
	small := Compare(Input{Base: g.runs(baseRev, 4, nil), Head: g.runs(headRev, 4, nil)}, DefaultOptions())
	if !math.IsInf(small.Phases[0].Base.Lo, -1) {
		t.Fatalf("4 runs: lo = %g, want −∞", small.Phases[0].Base.Lo)
	}
	for _, r := range []*Report{goldenReport(), small, errorReport()} {
		var first bytes.Buffer
		if err := RenderJSON(&first, r); err != nil {
			t.Fatal(err)
		}
		var decoded Report
		if err := json.Unmarshal(first.Bytes(), &decoded); err != nil {
			t.Fatal(err)
		}
		var second, md1, md2 bytes.Buffer
		if err := RenderJSON(&second, &decoded); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(first.Bytes(), second.Bytes()) {
			t.Errorf("JSON does not round-trip:\n%s\n---\n%s", first.Bytes(), second.Bytes())
		}
		_ = RenderMarkdown(&md1, r, RenderContext{})
		_ = RenderMarkdown(&md2, &decoded, RenderContext{})
		if md1.String() != md2.String() {
			t.Errorf("the decoded report renders differently")
		}
	}
	if !bytes.Contains(mustJSON(t, small), []byte(`"lo": null`)) {
		t.Error("infinite bounds are not written as null")
	}
}

func mustJSON(t *testing.T, r *Report) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := RenderJSON(&b, r); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func TestMarkdownEscapesWhatWouldBreakTheComment(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"a|b", "`a\\|b`"},
		{"x`y", "``x`y``"},
		{"`x", "`` `x ``"},
	}
	for _, c := range cases {
		if got := mdCode(c.in); got != c.want {
			t.Errorf("mdCode(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	if got := mdCell("<b>*x*</b> | y"); got != `&lt;b&gt;\*x\*&lt;/b&gt; \| y` {
		t.Errorf("mdCell = %q", got)
	}
	if got := mdFence("a ``` b"); got != "````" {
		t.Errorf("mdFence = %q", got)
	}
	if got := failureTail("a\nb\nc\nd", 2, 100); got != "c\nd" {
		t.Errorf("failureTail = %q", got)
	}
	if got := failureTail("ééé", 5, 3); got != "…é" {
		t.Errorf("failureTail cut inside a rune: %q", got)
	}
}

func TestFormatScalesUnitsForReaders(t *testing.T) {
	t.Parallel()
	cases := []struct{ got, want string }{
		{formatValue(0.8123, "sec/op"), "812.3ms"},
		{formatValue(2.345678, "sec/op"), "2.346s"},
		{formatValue(0.000012, "sec/op"), "12.00µs"},
		{formatValue(3.2e9, "instructions/op"), "3.200G"},
		{formatValue(3*1024*1024, "B/op"), "3.000Mi"},
		{formatDelta(-0.0123, "sec/op"), "-12.30ms"},
		{formatDelta(0.08, "sec/op"), "+80.00ms"},
		{formatPct(20.04), "+20.0%"},
		{formatPct(math.NaN()), "n/a"},
		{formatP(0.0004), "<0.001"},
		{formatP(0.0123), "0.012"},
		{formatCI(Summary{Median: 100, Lo: 99, Hi: 102}), "±2.0%"},
		{formatCI(Summary{Median: 100, Lo: math.Inf(-1), Hi: math.Inf(1)}), "±∞"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %q, want %q", i, c.got, c.want)
		}
	}
}

func TestRenderedRowsWithTooFewRunsShowNoPValue(t *testing.T) {
	t.Parallel()
	g := newSynth(45, 0.004)
	r := Compare(Input{Base: g.runs(baseRev, 4, nil), Head: g.runs(headRev, 4, nil)}, DefaultOptions())
	var b bytes.Buffer
	if err := RenderMarkdown(&b, r, RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| `msm_h` | ") || !strings.Contains(b.String(), " | — | 1.0% | inconclusive: too few runs |") || strings.Contains(b.String(), "∞") {
		t.Errorf("untested rows should show no p-value, and no interval should be infinite:\n%s", b.String())
	}
}

func TestHeadlineIsPlainTextWithTheVerdict(t *testing.T) {
	t.Parallel()
	got := Headline(goldenReport())
	if want := "Regression. Head is worse than base in msm_h +20.4%, total +3.3%."; got != want {
		t.Errorf("Headline = %q, want %q", got, want)
	}
	if strings.ContainsAny(got, "`\n") {
		t.Errorf("Headline = %q; want one plain-text line", got)
	}
	if got := Headline(errorReport()); !strings.HasPrefix(got, "Error. ") {
		t.Errorf("Headline(error report) = %q; want it to start with the verdict", got)
	}
}

// TestVariantsOfOneRevisionAreNamedAndNotAA: one revision run with two
// flag sets is an A/B comparison: no A/A warning, every rendering names
// each side's arguments, and the benchstat recipe exports each variant.
func TestVariantsOfOneRevisionAreNamedAndNotAA(t *testing.T) {
	t.Parallel()
	g := newSynth(7, 0.004)
	in := Input{
		BaseRev: baseRev, HeadRev: baseRev,
		HeadArgs: []string{"--lc-storage", "inline"},
		Base:     g.runs(baseRev, 12, nil),
		Head:     g.runs(baseRev, 12, map[string]float64{"synthesis": 1.2}),
	}
	r := Compare(in, DefaultOptions())
	if r.Verdict != VerdictRegression {
		t.Errorf("verdict %s, want the planted regression", r.Verdict)
	}
	if hasWarning(r, "A/A") {
		t.Errorf("A/A warning for two variants of one revision: %v", r.Warnings)
	}
	var text, md, js bytes.Buffer
	if err := RenderText(&text, r); err != nil {
		t.Fatal(err)
	}
	if err := RenderMarkdown(&md, r, RenderContext{}); err != nil {
		t.Fatal(err)
	}
	if err := RenderJSON(&js, r); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`(?m)^base\s+1111111 with no extra args\s+12 runs`, `(?m)^head\s+1111111 with --lc-storage inline\s+12 runs`} {
		if !regexp.MustCompile(want).MatchString(text.String()) {
			t.Errorf("text report does not match %s:\n%s", want, text.String())
		}
	}
	for _, want := range []string{
		"Base `1111111` with no extra args (12 runs, 12 ok) vs head `1111111` with `--lc-storage inline` (12 runs, 12 ok).",
		"export --rev " + baseRev + " --kind compare --per-run > base.txt",
		"export --rev " + baseRev + " --args '--lc-storage inline' --kind compare --per-run > head.txt",
		"benchstat -row /phase base.txt head.txt",
	} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("markdown report lacks %q:\n%s", want, md.String())
		}
	}
	var back Report
	if err := json.Unmarshal(js.Bytes(), &back); err != nil {
		t.Fatal(err)
	}
	if back.BaseArgs != nil || strings.Join(back.HeadArgs, " ") != "--lc-storage inline" || !strings.Contains(js.String(), `"head_args": [`) {
		t.Errorf("JSON args: base %q head %q\n%s", back.BaseArgs, back.HeadArgs, js.String())
	}

	// The same revision with the same arguments is still A/A.
	in.BaseArgs = in.HeadArgs
	if r := Compare(in, DefaultOptions()); !hasWarning(r, "A/A") {
		t.Errorf("same revision, same args: no A/A warning: %v", r.Warnings)
	}
}

func TestFormatArgsQuotesForTheShell(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, ""},
		{[]string{"--lc-storage", "inline"}, "--lc-storage inline"},
		{[]string{"--name=a b", ""}, "'--name=a b' ''"},
		{[]string{"it's", "$HOME"}, `'it'\''s' '$HOME'`},
	} {
		if got := FormatArgs(tc.args); got != tc.want {
			t.Errorf("FormatArgs(%q) = %q, want %q", tc.args, got, tc.want)
		}
	}
}

// TestHeadlineOfAReportWithoutPrimaryRows: a report stored by an older
// perfbot, whose rows carry no primary flag, gets a sentence that says
// so instead of a panic (the dashboard renders stored reports of any age).
func TestHeadlineOfAReportWithoutPrimaryRows(t *testing.T) {
	for _, v := range []Verdict{VerdictRegression, VerdictImprovement} {
		r := &Report{Verdict: v, Phases: []Row{{Key: Key{Benchmark: "Prove", Phase: "ntt", Unit: "sec/op"}, Verdict: v, ShiftPct: -20}}}
		got := Headline(r)
		if want := capitalize(verdictWord(v)) + ". The report marks none of its series as the ones its verdict rests on, so none is named here."; got != want {
			t.Errorf("Headline of a %s without primary rows = %q; want %q", v, got, want)
		}
	}
}

// unwrapped joins a text report's wrapped lines: its words with single
// spaces, for finding a phrase wherever the width broke it.
func unwrapped(s string) string { return strings.Join(strings.Fields(s), " ") }

package render

import (
	"math"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/internal/fmtx"
)

func TestMarkdownEscapesWhatWouldBreakTheComment(t *testing.T) {
	t.Parallel()
	cases := []struct{ in, want string }{
		{"a|b", "`a\\|b`"},
		{"x`y", "``x`y``"},
		{"`x", "`` `x ``"},
	}
	for _, c := range cases {
		if got := MdCode(c.in); got != c.want {
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
		{fmtx.FormatValue(0.8123, "sec/op"), "812.3ms"},
		{fmtx.FormatValue(2.345678, "sec/op"), "2.346s"},
		{fmtx.FormatValue(0.000012, "sec/op"), "12.00µs"},
		{fmtx.FormatValue(3.2e9, "instructions/op"), "3.200G"},
		{fmtx.FormatValue(3*1024*1024, "B/op"), "3.000Mi"},
		{fmtx.FormatDelta(-0.0123, "sec/op"), "-12.30ms"},
		{fmtx.FormatDelta(0.08, "sec/op"), "+80.00ms"},
		{fmtx.FormatPct(20.04), "+20.0%"},
		{fmtx.FormatPct(math.NaN()), "n/a"},
		{fmtx.FormatP(0.0004), "<0.001"},
		{fmtx.FormatP(0.0123), "0.012"},
		{FormatCI(analysis.Summary{Median: 100, Lo: 99, Hi: 102}), "±2.0%"},
		{FormatCI(analysis.Summary{Median: 100, Lo: math.Inf(-1), Hi: math.Inf(1)}), "±∞"},
	}
	for i, c := range cases {
		if c.got != c.want {
			t.Errorf("case %d: %q, want %q", i, c.got, c.want)
		}
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
	for _, v := range []analysis.Verdict{analysis.VerdictRegression, analysis.VerdictImprovement} {
		r := &analysis.Report{Verdict: v, Phases: []analysis.Row{{Key: analysis.Key{Benchmark: "Prove", Phase: "ntt", Unit: "sec/op"}, Verdict: v, ShiftPct: -20}}}
		got := Headline(r)
		if want := capitalize(verdictWord(v)) + ". The report marks none of its series as the ones its verdict rests on, so none is named here."; got != want {
			t.Errorf("Headline of a %s without primary rows = %q; want %q", v, got, want)
		}
	}
}

package analysis_test

import (
	"bytes"
	"html"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/analysis/render"
)

// mdFormatter formats a view's pieces as the comment does.
var mdFormatter = render.Formatter{
	Strong: func(s string) string { return "**" + render.MdText(s) + "**" },
	Code:   render.MdCode,
	Text:   render.MdText,
}

// TestViewWordsTheReportAsTheComment checks that a view formatted for
// Markdown holds the comment's own sentences and cells: the headline,
// every primary row's cells, each explanation line, the attribution's
// sentences and the profile diff's functions, so that the dashboard (which
// formats the same view for HTML) cannot tell a comparison differently.
func TestViewWordsTheReportAsTheComment(t *testing.T) {
	r := analysis.GoldenReport()
	var md bytes.Buffer
	if err := render.RenderMarkdown(&md, r, render.RenderContext{}); err != nil {
		t.Fatal(err)
	}
	comment := md.String()
	v := render.NewView(r, mdFormatter)

	if plain := render.NewView(r, render.Formatter{}); plain.Headline != render.Headline(r) {
		t.Errorf("headline %q; Headline says %q", plain.Headline, render.Headline(r))
	}
	if !strings.Contains(comment, strings.TrimPrefix(v.Headline, "Regression. ")) || v.Verdict != analysis.VerdictRegression {
		t.Errorf("the comment lacks the view's headline %q (verdict %s)", v.Headline, v.Verdict)
	}
	if v.AA {
		t.Error("a comparison of two revisions is marked A/A")
	}
	if len(v.Tables) == 0 {
		t.Fatal("no primary table")
	}
	for _, tab := range v.Tables {
		for _, row := range tab.Rows {
			cells := "| " + row.Label + " | " + row.Base + " → " + row.Head + " | "
			if !strings.Contains(comment, cells) {
				t.Errorf("the comment lacks the row %q", cells)
			}
			if row.Changed != (row.Verdict == analysis.VerdictRegression || row.Verdict == analysis.VerdictImprovement) {
				t.Errorf("row %s: changed %v with verdict %s", row.Label, row.Changed, row.Verdict)
			}
		}
	}
	var lines, functions int
	for _, tab := range append(append([]render.ViewTable{}, v.Tables...), v.Others...) {
		for _, e := range tab.Explanations {
			lines++
			if !strings.Contains(comment, e.Line) {
				t.Errorf("the comment lacks the explanation %q", e.Line)
			}
			if e.Profile != nil {
				for _, l := range e.Profile.Lists {
					for _, row := range l.Rows {
						functions++
						if !strings.Contains(comment, "| "+strings.Join(row, " | ")+" |") {
							t.Errorf("the comment lacks the profile row %q", row)
						}
					}
				}
			}
		}
	}
	if lines == 0 || functions == 0 {
		t.Errorf("%d explanation lines and %d profile functions; the golden report explains msm_h with a profile diff", lines, functions)
	}
	if len(v.Attribution) != len(r.Attribution) {
		t.Fatalf("%d attributions; the report has %d", len(v.Attribution), len(r.Attribution))
	}
	for _, a := range v.Attribution {
		for _, line := range a.Lines {
			if !strings.Contains(comment, line) {
				t.Errorf("the comment lacks the attribution line %q", line)
			}
		}
		if !a.Changed {
			continue
		}
		sum := 0.0
		for _, p := range a.Parts {
			if p.SharePct == p.SharePct { // not NaN
				sum += p.SharePct
			}
		}
		if sum < 99.9 || sum > 100.1 {
			t.Errorf("%s: the drawn shares add up to %.2f%%, want 100%%", a.Benchmark, sum)
		}
	}
}

// TestViewFormatsEveryPieceForItsRendering checks that nothing of a
// report reaches an HTML rendering unescaped: a benchmark and a warning
// that hold markup come out escaped, and names are formatted as code.
func TestViewFormatsEveryPieceForItsRendering(t *testing.T) {
	in := analysis.GoldenInput()
	for _, side := range [][]analysis.Run{in.Base, in.Head} {
		for i := range side {
			for j := range side[i].Samples {
				side[i].Samples[j].Key.Benchmark = "Prove/<script>x</script>"
			}
		}
	}
	r := analysis.Compare(in, analysis.DefaultOptions())
	r.Warnings = append(r.Warnings, `a <b>bold</b> & "quoted" caveat`)
	htmlFmt := render.Formatter{
		Strong: func(s string) string { return "<b>" + html.EscapeString(s) + "</b>" },
		Code:   func(s string) string { return "<code>" + html.EscapeString(s) + "</code>" },
		Text:   html.EscapeString,
	}
	v := render.NewView(r, htmlFmt)
	var all []string
	all = append(all, v.Headline, v.Method, v.Base, v.Head)
	all = append(all, v.Warnings...)
	for _, tab := range v.Tables {
		for _, row := range tab.Rows {
			all = append(all, row.Label, row.Delta, row.VerdictText)
		}
	}
	for _, a := range v.Attribution {
		all = append(all, a.Lines...)
	}
	joined := strings.Join(all, "\n")
	if strings.Contains(joined, "<script>") || strings.Contains(joined, "<b>bold") {
		t.Errorf("markup from the report reached the rendering unescaped:\n%s", joined)
	}
	if !strings.Contains(joined, "&lt;script&gt;") || !strings.Contains(joined, "&lt;b&gt;bold&lt;/b&gt; &amp; &#34;quoted&#34;") {
		t.Errorf("the names and the warning are not there escaped:\n%s", joined)
	}
	if !strings.Contains(v.Tables[0].Rows[0].Label, "<code>") {
		t.Errorf("row label %q is not formatted as code", v.Tables[0].Rows[0].Label)
	}
	for _, s := range all {
		if strings.ContainsAny(s, render.CodeOpen+render.CodeClose+render.StrongOpen+render.StrongClose) {
			t.Errorf("a marker is left in %q", s)
		}
	}
}

// TestViewSaysAnAAComparisonIsOne checks that a comparison of a revision
// with itself is marked A/A, and one of two argument sets of a revision
// is not.
func TestViewSaysAnAAComparisonIsOne(t *testing.T) {
	in := analysis.GoldenInput()
	in.HeadRev = in.BaseRev
	if v := render.NewView(analysis.Compare(in, analysis.DefaultOptions()), render.Formatter{}); !v.AA {
		t.Error("base = head is not marked A/A")
	}
	in.HeadArgs = []string{"--threads=2"}
	if v := render.NewView(analysis.Compare(in, analysis.DefaultOptions()), render.Formatter{}); v.AA {
		t.Error("two argument sets of one revision are marked A/A")
	}
}

package chart

import (
	"bytes"
	"fmt"
	"image/png"
	"io"
	"strings"
	"testing"
)

func stackFixture() *Stack {
	return &Stack{
		Title:   "prove by phase",
		Unit:    "ms",
		Commits: []string{"aaaaaaaa1111", "bbbbbbbb2222", "cccccccc3333", "dddddddd4444"},
		Parts:   []string{"synthesis", "msm_h", "other"},
		Values:  [][]float64{{10, 20, 1}, {10, 0, 1}, {12, 20, 1}, {11, 25, 2}},
	}
}

func hexFill(c interface{ RGBA() (r, g, b, a uint32) }) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("fill:#%02X%02X%02X", r>>8, g>>8, b>>8)
}

func TestStackedDrawsABarPerCommitPerPartAndALegend(t *testing.T) {
	t.Parallel()
	s := stackFixture()
	var buf bytes.Buffer
	if err := Stacked(&buf, s, Options{Format: SVG}); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	// Each part: one rectangle per commit (a zero-height one too) and
	// its legend swatch, in its own color.
	for j, part := range s.Parts {
		if got, want := strings.Count(svg, hexFill(partColor(j, part))+`"`), len(s.Commits)+1; got != want {
			t.Errorf("part %s (%s): %d filled shapes, want %d", part, hexFill(partColor(j, part)), got, want)
		}
	}
	for _, want := range []string{"prove by phase", ">ms<", ">synthesis<", ">msm_h<", ">other<", ">aaaaaaa<", ">ddddddd<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("svg lacks %q", want)
		}
	}
}

func TestStackedPNGHasTheRequestedSize(t *testing.T) {
	t.Parallel()
	var buf bytes.Buffer
	if err := Stacked(&buf, stackFixture(), Options{Format: PNG, Width: 640, Height: 300}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if b := img.Bounds(); b.Dx() != 640 || b.Dy() != 300 {
		t.Errorf("png %dx%d, want 640x300", b.Dx(), b.Dy())
	}
}

func TestStackedRefusesValuesThatDoNotFit(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		mutate func(*Stack)
		want   string
	}{
		"no commits":   {func(s *Stack) { s.Commits, s.Values = nil, nil }, "no commits or no parts"},
		"short row":    {func(s *Stack) { s.Values[2] = s.Values[2][:2] }, "commit 2 has 2 values for 3 parts"},
		"missing rows": {func(s *Stack) { s.Values = s.Values[:3] }, "4 commits but 3 rows of values"},
		"negative":     {func(s *Stack) { s.Values[1][0] = -1 }, "commit 1, part synthesis: -1 is not a length"},
	} {
		s := stackFixture()
		c.mutate(s)
		var buf bytes.Buffer
		err := Stacked(&buf, s, Options{Format: SVG})
		if err == nil || !strings.Contains(err.Error(), c.want) || buf.Len() != 0 {
			t.Errorf("%s: %v (%d bytes written), want an error containing %q and nothing written", name, err, buf.Len(), c.want)
		}
	}
}

func TestStackedYAxisFitsTheTallestBar(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		values [][]float64
		ticks  string
	}{
		{[][]float64{{0.002, 0.001}, {0.001, 0.0005}}, "0 0.001 0.002 0.003"},
		{[][]float64{{400, 500}, {420, 510}}, "0 200 400 600 800"},
		{[][]float64{{0, 0}}, "0 0.25 0.5 0.75 1"},
	} {
		s := &Stack{Commits: make([]string, len(tc.values)), Parts: []string{"a", "b"}, Values: tc.values}
		doc := drawSVG(t, func(w io.Writer) error { return Stacked(w, s, Options{Format: SVG}) })
		if got := strings.Join(doc.yTicks(doc.frame(t)), " "); got != tc.ticks {
			t.Errorf("bars %v: y ticks %q, want %q", tc.values, got, tc.ticks)
		}
	}
}

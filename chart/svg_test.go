package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"gonum.org/v1/plot/vg"

	"github.com/perfbot/perfbot/analysis"
)

var update = flag.Bool("update", false, "rewrite the golden files under testdata/")

// An svgText is a text element of a chart.
type svgText struct {
	x, y    float64 // where its baseline starts, y up as the chart draws
	moved   bool    // inside a transformed group (the rotated y label): x and y are relative
	style   map[string]string
	content string
}

// size is the text's font size in the SVG's units.
func (t svgText) size() float64 {
	v, _ := strconv.ParseFloat(strings.TrimSuffix(t.style["font-size"], "px"), 64)
	return v
}

// width is the text's width as Liberation Sans draws it.
func (t svgText) width() float64 {
	f := sans
	if t.style["font-weight"] == "bold" {
		f = sansBold
	}
	return textStyle(f, vg.Length(t.size()), nil).Width(t.content).Points()
}

// An svgPath is a path element of a chart.
type svgPath struct {
	pts   [][2]float64 // its points, y up; none for a path with arcs
	style map[string]string
	title string // its <title> child's text
}

// box returns the path's bounding box.
func (p svgPath) box() (r rect) {
	r = rect{math.Inf(1), math.Inf(1), math.Inf(-1), math.Inf(-1)}
	for _, pt := range p.pts {
		r.x0, r.y0 = math.Min(r.x0, pt[0]), math.Min(r.y0, pt[1])
		r.x1, r.y1 = math.Max(r.x1, pt[0]), math.Max(r.y1, pt[1])
	}
	return r
}

type rect struct{ x0, y0, x1, y1 float64 }

// inside says whether s lies within r, give or take a hundredth of a point.
func (r rect) inside(s rect) bool {
	const e = 0.01
	return r.x0 >= s.x0-e && r.x1 <= s.x1+e && r.y0 >= s.y0-e && r.y1 <= s.y1+e
}

// overlaps says whether r and s share more than a point's width.
func (r rect) overlaps(s rect) bool {
	return r.x0 < s.x1-1 && s.x0 < r.x1-1 && r.y0 < s.y1-1 && s.y0 < r.y1-1
}

// box is the box the text's glyphs take: from its baseline down by a
// fifth of its size and up by four fifths.
func (t svgText) box() rect {
	return rect{t.x, t.y - 0.2*t.size(), t.x + t.width(), t.y + 0.8*t.size()}
}

type svgDoc struct {
	texts []svgText
	paths []svgPath
}

var pathCommand = regexp.MustCompile(`([MLZA])([^MLZA]*)`)

// parseSVG parses a chart, failing the test unless it is well-formed XML
// with an <svg> root.
func parseSVG(t *testing.T, b []byte) svgDoc {
	t.Helper()
	var doc svgDoc
	d := xml.NewDecoder(bytes.NewReader(b))
	var stack []string
	groups := 0 // <g> elements open
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
		switch e := tok.(type) {
		case xml.StartElement:
			if len(stack) == 0 && e.Name.Local != "svg" {
				t.Fatalf("root element <%s>, want <svg>", e.Name.Local)
			}
			stack = append(stack, e.Name.Local)
			attr := map[string]string{}
			for _, a := range e.Attr {
				attr[a.Name.Local] = a.Value
			}
			style := map[string]string{}
			for _, kv := range strings.Split(attr["style"], ";") {
				if k, v, ok := strings.Cut(kv, ":"); ok {
					style[k] = v
				}
			}
			switch e.Name.Local {
			case "g":
				groups++
			case "text":
				x, _ := strconv.ParseFloat(attr["x"], 64)
				y, _ := strconv.ParseFloat(attr["y"], 64)
				doc.texts = append(doc.texts, svgText{x: x, y: -y, moved: groups > 1, style: style})
			case "path":
				p := svgPath{style: style}
				for _, m := range pathCommand.FindAllStringSubmatch(attr["d"], -1) {
					if m[1] == "A" {
						p.pts = nil
						break
					}
					if m[1] == "Z" {
						continue
					}
					var x, y float64
					if _, err := fmt.Sscanf(m[2], "%g,%g", &x, &y); err != nil {
						t.Fatalf("path %q: %v", attr["d"], err)
					}
					p.pts = append(p.pts, [2]float64{x, y})
				}
				doc.paths = append(doc.paths, p)
			}
		case xml.EndElement:
			stack = stack[:len(stack)-1]
			if e.Name.Local == "g" {
				groups--
			}
		case xml.CharData:
			switch {
			case len(stack) > 0 && stack[len(stack)-1] == "text":
				doc.texts[len(doc.texts)-1].content += string(e)
			case len(stack) > 1 && stack[len(stack)-1] == "title" && stack[len(stack)-2] == "path":
				doc.paths[len(doc.paths)-1].title += string(e)
			}
		}
	}
	return doc
}

// frame returns the plotting area: the rectangle the frame path draws.
func (doc svgDoc) frame(t *testing.T) rect {
	t.Helper()
	var frames []rect
	for _, p := range doc.paths {
		if p.style["stroke"] == hex(frameColor) && len(p.pts) == 5 && p.pts[0] == p.pts[4] {
			frames = append(frames, p.box())
		}
	}
	if len(frames) != 1 {
		t.Fatalf("%d frames, want 1", len(frames))
	}
	return frames[0]
}

// text returns the texts whose content is s.
func (doc svgDoc) text(s string) []svgText {
	var out []svgText
	for _, t := range doc.texts {
		if t.content == s {
			out = append(out, t)
		}
	}
	return out
}

func hex(c interface{ RGBA() (r, g, b, a uint32) }) string {
	r, g, b, _ := c.RGBA()
	return fmt.Sprintf("#%02X%02X%02X", r>>8, g>>8, b>>8)
}

// yTicks returns the y axis's tick labels, bottom up: the unrotated
// texts left of the plotting area.
func (doc svgDoc) yTicks(frame rect) []string {
	var out []string
	for _, t := range doc.texts {
		if !t.moved && t.x+t.width() <= frame.x0 && t.y > frame.y0-t.size() {
			out = append(out, t.content)
		}
	}
	return out
}

func drawSVG(t *testing.T, f func(io.Writer) error) svgDoc {
	t.Helper()
	var b bytes.Buffer
	if err := f(&b); err != nil {
		t.Fatal(err)
	}
	return parseSVG(t, b.Bytes())
}

func TestEveryTextIsLiberationSansOrSansSerifOf12PointsOrMore(t *testing.T) {
	t.Parallel()
	for name, f := range map[string]func(io.Writer) error{
		"trend":           func(w io.Writer) error { return Trend(w, trend(40, 8, 20, 31), Options{Format: SVG}) },
		"trend 300x200":   func(w io.Writer) error { return Trend(w, trend(40, 20), Options{Format: SVG, Width: 300, Height: 200}) },
		"stacked":         func(w io.Writer) error { return Stacked(w, thinStack(), Options{Format: SVG}) },
		"stacked 400x300": func(w io.Writer) error { return Stacked(w, thinStack(), Options{Format: SVG, Width: 400, Height: 300}) },
	} {
		doc := drawSVG(t, f)
		if len(doc.texts) < 10 {
			t.Fatalf("%s: %d texts", name, len(doc.texts))
		}
		for _, tx := range doc.texts {
			if fam := tx.style["font-family"]; fam != "'Liberation Sans',Arial,Helvetica,sans-serif" {
				t.Errorf("%s: %q in font-family %q", name, tx.content, fam)
			}
			if tx.size() < 12 || !strings.HasSuffix(tx.style["font-size"], "px") {
				t.Errorf("%s: %q in font-size %q, want 12px or more", name, tx.content, tx.style["font-size"])
			}
		}
		// The title is the first text, bold and larger.
		if tt := doc.texts[0]; tt.size() != titleSize || tt.style["font-weight"] != "bold" {
			t.Errorf("%s: title %q in %v, want %vpx bold", name, tt.content, tt.style, titleSize)
		}
	}
}

func TestTrendLegendIsBelowThePlottingAreaAndTheDataInsideIt(t *testing.T) {
	t.Parallel()
	for _, o := range []Options{{Format: SVG}, {Format: SVG, Width: 1400, Height: 700}, {Format: SVG, Width: 640, Height: 360}} {
		doc := drawSVG(t, func(w io.Writer) error { return Trend(w, trend(40, 8, 20, 31), o) })
		frame := doc.frame(t)
		xLabel := doc.text("commit (first-parent history of " + short(sha(39)) + ")")
		if len(xLabel) != 1 {
			t.Fatalf("%dx%d: %d x axis labels", o.Width, o.Height, len(xLabel))
		}
		for _, e := range []string{"median", "95% interval of the median", "segment median", "change point"} {
			l := doc.text(e)
			if len(l) != 1 {
				t.Errorf("%dx%d: legend entry %q %d times, want once", o.Width, o.Height, e, len(l))
				continue
			}
			// Below the x axis's label, so below the plotting area, and
			// within the image.
			if b := l[0].box(); b.y1 > xLabel[0].box().y0 || b.x0 < 0 || b.x1 > float64(pixels(max(o.Width, DefaultWidth))) {
				t.Errorf("%dx%d: legend entry %q at %+v, want it under the x axis's label at %+v", o.Width, o.Height, e, b, xLabel[0].box())
			}
		}
		// The median line and its dots are inside; one more median-blue
		// line, the legend's sample, is below.
		in, below := 0, 0
		for _, p := range doc.paths {
			if p.style["stroke"] != hex(MedianColor) {
				continue
			}
			switch b := p.box(); {
			case b.inside(frame):
				in++
			case b.y1 < frame.y0:
				below++
			default:
				t.Errorf("%dx%d: a median path at %+v, across the frame %+v", o.Width, o.Height, b, frame)
			}
		}
		if in != 1 || below != 1 {
			t.Errorf("%dx%d: %d median lines in the plotting area and %d below; want 1 and 1", o.Width, o.Height, in, below)
		}
	}
}

func TestStackedLegendIsRightOfThePlottingAreaOrBelowIt(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o     Options
		right bool
	}{
		{Options{Format: SVG}, true},
		{Options{Format: SVG, Width: 1400, Height: 700}, true},
		{Options{Format: SVG, Width: 500, Height: 400}, false}, // the names take more than 30% of the width
	} {
		s := thinStack()
		doc := drawSVG(t, func(w io.Writer) error { return Stacked(w, s, tc.o) })
		frame := doc.frame(t)
		var ys []float64
		for _, e := range []string{"other (incl. 2 parts under 3%)", "msm", "ntt", "synthesis", "change of the total"} {
			l := doc.text(e)
			if len(l) != 1 {
				t.Errorf("%+v: legend entry %q %d times, want once", tc.o, e, len(l))
				continue
			}
			b := l[0].box()
			if tc.right && b.x0 <= frame.x1 || !tc.right && b.y1 >= frame.y0 {
				t.Errorf("%+v: legend entry %q at %+v, want it %s the frame %+v", tc.o, e, b, map[bool]string{true: "right of", false: "below"}[tc.right], frame)
			}
			ys = append(ys, -l[0].y)
		}
		// Beside the bars the legend lists the parts top first, as stacked.
		if tc.right && !sortedFloats(ys) {
			t.Errorf("%+v: legend entries at heights %v, want them top down", tc.o, ys)
		}
		// Every segment of a bar is in the plotting area; each part's
		// legend swatch is outside it.
		for j, part := range []string{"synthesis", "ntt", "msm", "other"} {
			in, out := 0, 0
			for _, p := range doc.paths {
				if p.style["fill"] != hex(partColor(j, part)) {
					continue
				}
				if p.box().inside(frame) {
					in++
				} else if !p.box().overlaps(frame) {
					out++
				}
			}
			if in != len(s.Commits) || out != 1 {
				t.Errorf("%+v: part %s: %d segments in the plotting area and %d swatches outside, want %d and 1", tc.o, part, in, out, len(s.Commits))
			}
		}
	}
}

func sortedFloats(xs []float64) bool {
	for i := 1; i < len(xs); i++ {
		if xs[i] < xs[i-1] {
			return false
		}
	}
	return true
}

// medians returns a trend of n sec/op medians evenly from lo to hi
// seconds, without intervals or change points.
func medians(lo, hi float64, n int) *analysis.Trend {
	tr := trend(n)
	tr.Segments = nil
	for i := range tr.Commits {
		c := &tr.Commits[i]
		c.Median = lo + (hi-lo)*float64(i)/float64(n-1)
		c.Lo, c.Hi = math.Inf(-1), math.Inf(1)
	}
	return tr
}

func TestTrendYTicksAreInTheUnitOfTheAxisAndTheTitle(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		lo, hi float64
		unit   string
		ticks  string
	}{
		// AxisScale scales by the largest median: 1.25 s is in seconds.
		{0.5, 1.25, "sec/op", "0.5 0.75 1 1.25"},
		{0.5, 0.95, "ms/op", "500 600 700 800 900"},
		{2.5, 5, "sec/op", "2.5 3 3.5 4 4.5 5"},
		{0.0006, 0.00084, "µs/op", "600 650 700 750 800 850"},
	} {
		tr := medians(tc.lo, tc.hi, 16)
		doc := drawSVG(t, func(w io.Writer) error { return Trend(w, tr, Options{Format: SVG}) })
		if got := strings.Join(doc.yTicks(doc.frame(t)), " "); got != tc.ticks {
			t.Errorf("%v to %v s: y ticks %q, want %q", tc.lo, tc.hi, got, tc.ticks)
		}
		// One unit everywhere: the title, the axis; sec/op nowhere else.
		title, axis := doc.texts[0].content, doc.text(tc.unit)
		if want := "Prove/phase=total " + tc.unit + " on gpu-1"; title != want || len(axis) != 1 || !axis[0].moved {
			t.Errorf("%v to %v s: title %q and %d y axis labels %q; want %q and the rotated label", tc.lo, tc.hi, title, len(axis), tc.unit, want)
		}
		for _, tx := range doc.texts {
			if strings.Contains(tx.content, "/op") && !strings.Contains(tx.content, tc.unit) {
				t.Errorf("%v to %v s: text %q names another unit than %s", tc.lo, tc.hi, tx.content, tc.unit)
			}
		}
	}
}

func TestIntervalsAreDarkBarsWithCaps(t *testing.T) {
	t.Parallel()
	doc := drawSVG(t, func(w io.Writer) error { return Trend(w, trend(10), Options{Format: SVG}) })
	frame := doc.frame(t)
	bars, caps := 0, 0
	for _, p := range doc.paths {
		if p.style["stroke"] != hex(IntervalColor) || !p.box().inside(frame) {
			continue
		}
		if w, _ := strconv.ParseFloat(p.style["stroke-width"], 64); w < 1.25 {
			t.Errorf("interval path %v %v is %v points wide, want 1.25 or more", p.pts, p.style, w)
		}
		switch b := p.box(); {
		case b.x0 == b.x1:
			bars++
		case b.y0 == b.y1 && b.x1-b.x0 >= 6:
			caps++
		}
	}
	// trend(10) has no interval on its 5th and 10th commits.
	if bars != 8 || caps != 16 {
		t.Errorf("%d interval bars and %d caps, want 8 and 16", bars, caps)
	}
}

func TestChangePointLabelsNeitherOverlapNorAreCrossed(t *testing.T) {
	t.Parallel()
	for _, at := range [][]int{{20}, {8, 10, 12}, {8, 10, 12, 35, 37, 39}, {1, 2, 3}} {
		doc := drawSVG(t, func(w io.Writer) error { return Trend(w, trend(40, at...), Options{Format: SVG}) })
		frame := doc.frame(t)
		var labels []rect
		for _, tx := range doc.texts {
			if tx.style["fill"] == hex(ChangePointColor) {
				b := tx.box()
				labels = append(labels, b)
				if b.y0 < frame.y1 || b.x0 < frame.x0 || b.x1 > frame.x1 {
					t.Errorf("change points %v: label %q at %+v, want it above the plotting area %+v", at, tx.content, b, frame)
				}
			}
		}
		if len(labels) != len(at) {
			t.Errorf("change points %v: %d labels", at, len(labels))
		}
		for i, a := range labels {
			for _, b := range labels[:i] {
				if a.overlaps(b) {
					t.Errorf("change points %v: labels at %+v and %+v overlap", at, a, b)
				}
			}
			for _, p := range doc.paths {
				if p.style["stroke"] != hex(ChangePointColor) {
					continue
				}
				if l := p.box(); l.x0 > a.x0 && l.x0 < a.x1 && l.y1 > a.y0+1 && l.y0 < a.y1 {
					t.Errorf("change points %v: a line at %+v crosses the label at %+v", at, l, a)
				}
			}
		}
	}
}

// thinStack is a stack with two parts under MinShare of every bar, one
// just over it at one commit, an "other" part and a change of total at
// its third commit.
func thinStack() *Stack {
	return &Stack{
		Title:    "prove by phase",
		Unit:     "ms/op",
		Commits:  []string{"aaaaaaa111", "bbbbbbb222", "ccccccc333", "ddddddd444", "eeeeeee555"},
		Parts:    []string{"synthesis", "ntt", "poseidon", "msm", "serialize", "other"},
		Values:   [][]float64{{400, 30, 2, 500, 8, 10}, {400, 30, 2, 500, 8, 10}, {400, 30, 2, 600, 8, 10}, {400, 30, 2, 600, 8, 10}, {400, 30, 2, 600, 8, 10}},
		ChangeAt: []int{2},
	}
}

func TestStackedMergesPartsUnder3PercentIntoOther(t *testing.T) {
	t.Parallel()
	for name, tc := range map[string]struct {
		s      *Stack
		parts  string
		values []float64 // of the first commit
	}{
		"two thin parts and other": {thinStack(), "synthesis ntt msm other", []float64{400, 30, 500, 20}},
		"two thin parts, no other": {&Stack{Commits: []string{"a", "b"}, Parts: []string{"x", "thin", "y", "thinner"},
			Values: [][]float64{{50, 1, 50, 0}, {50, 2, 50, 0.5}}}, "x y other", []float64{50, 50, 1}},
		"one thin part, no other: kept": {&Stack{Commits: []string{"a"}, Parts: []string{"x", "thin"}, Values: [][]float64{{100, 1}}},
			"x thin", []float64{100, 1}},
		"thin at one commit only: kept": {&Stack{Commits: []string{"a", "b"}, Parts: []string{"x", "y", "other"},
			Values: [][]float64{{100, 1, 1}, {100, 10, 1}}}, "x y other", []float64{100, 1, 1}},
	} {
		g := group(tc.s)
		if got := strings.Join(g.parts, " "); got != tc.parts || fmt.Sprint(g.values[0]) != fmt.Sprint(tc.values) {
			t.Errorf("%s: parts %q, first bar %v; want %q, %v", name, got, g.values[0], tc.parts, tc.values)
		}
	}
}

func TestStackedSegmentsHaveTooltipsWithValueUnitAndShare(t *testing.T) {
	t.Parallel()
	s := thinStack()
	doc := drawSVG(t, func(w io.Writer) error { return Stacked(w, s, Options{Format: SVG}) })
	var tips []string
	for _, p := range doc.paths {
		if p.title != "" {
			tips = append(tips, p.title)
		}
	}
	if len(tips) != 5*4 {
		t.Fatalf("%d tooltips, want 20: %q", len(tips), tips)
	}
	want := []string{
		"synthesis: 400 ms/op (42.1%)", "ntt: 30.0 ms/op (3.2%)", "msm: 500 ms/op (52.6%)",
		"other (incl. poseidon, serialize): 20.0 ms/op (2.1%)",
	}
	if got := tips[:4]; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("first bar's tooltips %q, want %q", got, want)
	}
	if tips[18] != "msm: 600 ms/op (57.1%)" {
		t.Errorf("last bar's msm tooltip %q", tips[18])
	}
}

func TestStackedMarksTheChangesOfTheTotal(t *testing.T) {
	t.Parallel()
	s := thinStack()
	s.ChangeAt = []int{2, 4}
	doc := drawSVG(t, func(w io.Writer) error { return Stacked(w, s, Options{Format: SVG}) })
	frame := doc.frame(t)
	// The segments' x extents, by commit: the bars of synthesis.
	var bars []rect
	for _, p := range doc.paths {
		if p.style["fill"] == hex(StackColors[0]) && p.box().inside(frame) {
			bars = append(bars, p.box())
		}
	}
	var lines []rect
	for _, p := range doc.paths {
		if p.style["stroke"] == hex(StackChangeColor) && p.style["stroke-dasharray"] != "" && p.box().inside(frame) {
			lines = append(lines, p.box())
		}
	}
	if len(bars) != 5 || len(lines) != 2 {
		t.Fatalf("%d bars and %d change lines, want 5 and 2", len(bars), len(lines))
	}
	for i, at := range s.ChangeAt {
		if l := lines[i]; l.x0 != l.x1 || l.x0 <= bars[at-1].x1 || l.x0 >= bars[at].x0 || l.y1-l.y0 < frame.y1-frame.y0-0.01 {
			t.Errorf("change at %d: line %+v, want it across the plotting area between bars %+v and %+v", at, l, bars[at-1], bars[at])
		}
	}
	s.ChangeAt = []int{5}
	if err := Stacked(io.Discard, s, Options{Format: SVG}); err == nil || !strings.Contains(err.Error(), "change at commit 5: want 0 to 4") {
		t.Errorf("a change past the last commit: %v", err)
	}
}

func TestFixSVGRefusesTooltipsThatDoNotMatchTheSegments(t *testing.T) {
	t.Parallel()
	svg := []byte("<svg>\n" + tooltipMark + `<path d="M0,0L1,1Z" style="fill:#FF0000"/>` + "\n</g>\n" + tooltipMark + "</g>\n</svg>\n")
	got, err := fixSVG(svg, []string{"a: 1 <ms> (50%)", "b"})
	if want := "<svg>\n" + `<path d="M0,0L1,1Z" style="fill:#FF0000"><title>a: 1 &lt;ms&gt; (50%)</title></path>` + "\n</svg>\n"; err != nil || string(got) != want {
		t.Errorf("fixSVG = %q, %v; want %q", got, err, want)
	}
	for _, tips := range [][]string{{"a"}, {"a", "b", "c"}} {
		if _, err := fixSVG(svg, tips); err == nil {
			t.Errorf("%d tooltips for 2 segments: no error", len(tips))
		}
	}
}

// outline lists a chart's texts and tooltips, one a line, for a golden
// file: what a reader reads, in which font, without coordinates.
func outline(doc svgDoc) []byte {
	var b bytes.Buffer
	for _, t := range doc.texts {
		fmt.Fprintf(&b, "text %q %s %s %s\n", t.content, t.style["font-size"], t.style["font-weight"], t.style["fill"])
	}
	for _, p := range doc.paths {
		if p.title != "" {
			fmt.Fprintf(&b, "title %q %s\n", p.title, p.style["fill"])
		}
	}
	return b.Bytes()
}

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
		t.Fatalf("%v (run go test ./chart -run %s -update to create it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from the golden file; run go test ./chart -update and review the diff\n--- got ---\n%s", path, got)
	}
}

func TestChartTextsMatchGolden(t *testing.T) {
	t.Parallel()
	checkGolden(t, "trend-texts.golden", outline(drawSVG(t, func(w io.Writer) error {
		return Trend(w, trend(40, 8, 20, 31), Options{Format: SVG})
	})))
	checkGolden(t, "stacked-texts.golden", outline(drawSVG(t, func(w io.Writer) error {
		return Stacked(w, thinStack(), Options{Format: SVG})
	})))
}

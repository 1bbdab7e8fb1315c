package chart

import (
	"bytes"
	"encoding/xml"
	"errors"
	"fmt"
	"image/png"
	"io"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/perfbot/perfbot/analysis"
)

// sha is the SHA of a fixture's commit i: c0ffee0, c0ffee1, … and
// zeros.
func sha(i int) string { return fmt.Sprintf("%07x%033x", 0xc0ffee0+i, 0) }

// trend returns a trend of n commits with change points at the given
// indices, each a +10% step, and no interval on every fifth commit.
func trend(n int, at ...int) *analysis.Trend {
	t := &analysis.Trend{
		Key:        analysis.Key{Benchmark: "Prove", Phase: "total", Unit: "sec/op"},
		Machine:    "gpu-1",
		Order:      analysis.OrderFirstParent,
		Head:       sha(n - 1),
		Confidence: 0.95,
	}
	level, start := 0.8, 0
	for i := range n {
		if len(at) > 0 && at[0] == i {
			t.Segments = append(t.Segments, analysis.TrendSegment{Start: start, End: i, Median: level})
			t.ChangePoints = append(t.ChangePoints, analysis.TrendChange{
				Index: i, Commit: sha(i), Before: level, After: level * 1.1, ChangePct: 10, Direction: "regression",
			})
			level, start, at = level*1.1, i, at[1:]
		}
		m := level * (1 + 0.002*math.Sin(float64(i)))
		c := analysis.TrendCommit{Index: i, Commit: sha(i), FirstRun: time.Unix(int64(i)*3600, 0), Runs: 6,
			Median: m, Lo: m * 0.99, Hi: m * 1.01}
		if i%5 == 4 {
			c.Runs, c.Lo, c.Hi = 3, math.Inf(-1), math.Inf(1)
		}
		c.ChangePoint = len(t.ChangePoints) > 0 && t.ChangePoints[len(t.ChangePoints)-1].Index == i
		t.Commits = append(t.Commits, c)
	}
	t.Segments = append(t.Segments, analysis.TrendSegment{Start: start, End: n, Median: level})
	return t
}

// redElements parses svg, failing unless it is well-formed XML with an
// <svg> root, and counts paths stroked and texts filled in the
// change-point color.
func redElements(t *testing.T, svg []byte) (paths, texts int) {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	root := ""
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed: %v", err)
		}
		e, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = e.Name.Local
		}
		for _, a := range e.Attr {
			if a.Name.Local != "style" {
				continue
			}
			if e.Name.Local == "path" && strings.Contains(a.Value, "stroke:#D62728") {
				paths++
			}
			if e.Name.Local == "text" && strings.Contains(a.Value, "fill:#D62728") {
				texts++
			}
		}
	}
	if root != "svg" {
		t.Fatalf("root element <%s>, want <svg>", root)
	}
	return paths, texts
}

func TestSVGHasOneRedLineAndLabelPerChangePoint(t *testing.T) {
	t.Parallel()
	for _, at := range [][]int{nil, {20}, {8, 20, 31}} {
		var b bytes.Buffer
		if err := Trend(&b, trend(40, at...), Options{Format: SVG}); err != nil {
			t.Fatal(err)
		}
		paths, texts := redElements(t, b.Bytes())
		legend := 0
		if len(at) > 0 {
			legend = 1
		}
		if paths != len(at)+legend || texts != len(at) {
			t.Errorf("change points %v: %d red paths and %d red labels, want %d and %d", at, paths, texts, len(at)+legend, len(at))
		}
		if !bytes.Contains(b.Bytes(), []byte(`width="750pt" height="375pt"`)) {
			t.Errorf("change points %v: SVG is not 1000x500 pixels at 96 dpi:\n%.300s", at, b.String())
		}
	}
}

func TestPNGHasTheRequestedSize(t *testing.T) {
	t.Parallel()
	for _, size := range [][2]int{{0, 0}, {333, 222}, {1600, 900}} {
		var b bytes.Buffer
		if err := Trend(&b, trend(40, 20), Options{Format: PNG, Width: size[0], Height: size[1]}); err != nil {
			t.Fatal(err)
		}
		cfg, err := png.DecodeConfig(bytes.NewReader(b.Bytes()))
		if err != nil {
			t.Fatalf("%v: decode: %v", size, err)
		}
		w, h := size[0], size[1]
		if w == 0 {
			w, h = DefaultWidth, DefaultHeight
		}
		if cfg.Width != w || cfg.Height != h {
			t.Errorf("%v: PNG is %dx%d, want %dx%d", size, cfg.Width, cfg.Height, w, h)
		}
	}
}

func TestTinyAndFlatTrendsDraw(t *testing.T) {
	t.Parallel()
	one := trend(1)
	flat := trend(3)
	for i := range flat.Commits {
		flat.Commits[i].Median, flat.Commits[i].Lo, flat.Commits[i].Hi = 1, math.Inf(-1), math.Inf(1)
	}
	for name, tr := range map[string]*analysis.Trend{"one commit": one, "flat, no intervals": flat} {
		for _, f := range Formats {
			if err := Trend(io.Discard, tr, Options{Format: f}); err != nil {
				t.Errorf("%s as %s: %v", name, f, err)
			}
		}
	}
}

func TestBadOptionsSayWhatIsWrong(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		o    Options
		want string
	}{
		{Options{Format: "gif"}, `chart format "gif": want one of svg, png`},
		{Options{Format: SVG, Width: 50, Height: 500}, "chart size 50x500: want 200 to 10000 pixels a side"},
		{Options{Format: PNG, Width: 500, Height: 20000}, "chart size 500x20000"},
	} {
		var b bytes.Buffer
		err := Trend(&b, trend(10), tc.o)
		if err == nil || !strings.Contains(err.Error(), tc.want) || b.Len() != 0 {
			t.Errorf("%+v: error %v, %d bytes written; want %q and nothing written", tc.o, err, b.Len(), tc.want)
		}
	}
	if err := Trend(io.Discard, &analysis.Trend{}, Options{Format: SVG}); err == nil {
		t.Error("a trend without commits drew")
	}
}

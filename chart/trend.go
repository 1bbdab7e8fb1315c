// Package chart draws perfbot's charts as SVG or PNG images with
// gonum.org/v1/plot. In flows an analysis.Trend or a Stack; out flow
// the image's bytes on an io.Writer. It is apart from analysis, which
// imports only the standard library and x/perf, so that the plotting
// library and its fonts stay out of everything but the commands that
// draw.
package chart

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/perfbot/perfbot/analysis"
)

// The image formats.
const (
	SVG = "svg"
	PNG = "png"
)

// Formats lists the image formats Trend draws.
var Formats = []string{SVG, PNG}

// Default and largest image sizes, in pixels.
const (
	DefaultWidth  = 1000
	DefaultHeight = 500
	MinSize       = 200
	MaxSize       = 10000
)

// The colors of a trend chart. Only change points are drawn in
// ChangePointColor: in SVG each is one path (style stroke:#D62728, the
// vertical line) and one text (style fill:#D62728, its label); the
// legend adds one more path, its sample line.
var (
	MedianColor      = color.RGBA{0x1f, 0x77, 0xb4, 0xff}
	IntervalColor    = color.RGBA{0x33, 0x33, 0x33, 0xff}
	SegmentColor     = color.RGBA{0x7f, 0x7f, 0x7f, 0xff}
	ChangePointColor = color.RGBA{0xd6, 0x27, 0x28, 0xff}
)

// Options size and format a chart.
type Options struct {
	Format string // SVG or PNG
	// Width and Height are in pixels (0: the defaults). A PNG has exactly
	// this size; an SVG says this size in points scaled to 96 dpi
	// (width="750pt" for 1000 pixels), which browsers show at this many
	// CSS pixels.
	Width, Height int
}

// dpi is the resolution sizes in pixels are drawn at.
const dpi = 96

// Trend draws t: the per-commit medians as a line through dots, each
// commit's interval of the median as an error bar with caps (none where
// there were too few runs for one), each segment's median as a dashed
// grey line, and each change point as a vertical red line on its commit
// labelled, above the plotting area, with its short SHA and change. The
// x axis is the commit index in the trend's order, labelled with short
// SHAs at most every 90 pixels; the y axis is in the unit scaled as the
// text output scales it (analysis.Trend.AxisScale), which the title
// names too, with ticks at nice steps. The legend is below the x axis.
// Every text is Liberation Sans, at least 12 points.
func Trend(w io.Writer, t *analysis.Trend, o Options) error {
	o, err := o.sized()
	if err != nil {
		return err
	}
	if len(t.Commits) == 0 {
		return fmt.Errorf("chart: the trend has no commits")
	}
	f, err := trendFigure(t, o)
	if err != nil {
		return err
	}
	return render(w, f, o, nil)
}

// sized returns o with the default size filled in, or an error for a
// size out of range.
func (o Options) sized() (Options, error) {
	if o.Width == 0 {
		o.Width = DefaultWidth
	}
	if o.Height == 0 {
		o.Height = DefaultHeight
	}
	if o.Width < MinSize || o.Height < MinSize || o.Width > MaxSize || o.Height > MaxSize {
		return o, fmt.Errorf("chart size %dx%d: want %d to %d pixels a side", o.Width, o.Height, MinSize, MaxSize)
	}
	return o, nil
}

// render draws f in o's format and size and writes the image to w. An
// SVG's bar segments get the tooltips, in the order they were drawn
// (see fixSVG).
func render(w io.Writer, f *figure, o Options, tooltips []string) error {
	var out []byte
	switch o.Format {
	case SVG:
		c := vgsvg.New(pixels(o.Width), pixels(o.Height))
		f.draw(draw.New(c))
		var b bytes.Buffer
		if _, err := c.WriteTo(&b); err != nil {
			return fmt.Errorf("draw svg chart: %w", err)
		}
		var err error
		if out, err = fixSVG(b.Bytes(), tooltips); err != nil {
			return err
		}
	case PNG:
		c := vgimg.NewWith(vgimg.UseImage(image.NewRGBA(image.Rect(0, 0, o.Width, o.Height))), vgimg.UseDPI(dpi))
		f.draw(draw.New(c))
		var b bytes.Buffer
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(&b); err != nil {
			return fmt.Errorf("draw png chart: %w", err)
		}
		out = b.Bytes()
	default:
		return fmt.Errorf("chart format %q: want one of %s", o.Format, strings.Join(Formats, ", "))
	}
	if _, err := w.Write(out); err != nil {
		return fmt.Errorf("write %s chart: %w", o.Format, err)
	}
	return nil
}

// pixels converts pixels at dpi to a length.
func pixels(n int) vg.Length { return vg.Length(n) * vg.Inch / dpi }

// trendTitle names the series in the unit the y axis shows it in, as
// analysis.Key.String does: "Prove/phase=total ms/op on gpu-1".
func trendTitle(t *analysis.Trend, unit string) string {
	k := t.Key
	k.Unit = unit
	return fmt.Sprintf("%s on %s", k, t.Machine)
}

// trendFigure lays out the chart Trend draws.
func trendFigure(t *analysis.Trend, o Options) (*figure, error) {
	factor, unit := t.AxisScale()
	n := len(t.Commits)
	p := newPlot(tickCount(o.Height))
	p.Title.Text = trendTitle(t, unit)
	p.Y.Label.Text = unit
	if t.Order == analysis.OrderFirstParent {
		p.X.Label.Text = fmt.Sprintf("commit (first-parent history of %s)", short(t.Head))
	} else {
		p.X.Label.Text = "commit (in the order of their first runs)"
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.X.Tick.Marker = shaTicks(t, o.Width)
	p.Add(grid{})
	f := &figure{p: p}

	medians := make(plotter.XYs, n)
	var bars errorBars
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, c := range t.Commits {
		y := c.Median / factor
		medians[i] = plotter.XY{X: float64(i), Y: y}
		lo, hi = math.Min(lo, y), math.Max(hi, y)
		if isFinite(c.Lo) && isFinite(c.Hi) {
			l, h := c.Lo/factor, c.Hi/factor
			bars.XYs = append(bars.XYs, plotter.XY{X: float64(i), Y: y})
			bars.errs = append(bars.errs, [2]float64{y - l, h - y})
			lo, hi = math.Min(lo, l), math.Max(hi, h)
		}
	}

	var segLegend legendEntry
	for i, s := range t.Segments {
		seg, err := plotter.NewLine(plotter.XYs{
			{X: float64(s.Start) - 0.5, Y: s.Median / factor},
			{X: float64(s.End) - 0.5, Y: s.Median / factor},
		})
		if err != nil {
			return nil, fmt.Errorf("chart: segment: %w", err)
		}
		seg.Color = SegmentColor
		seg.Width = vg.Points(1.5)
		seg.Dashes = []vg.Length{vg.Points(6), vg.Points(4)}
		p.Add(seg)
		if i == 0 {
			segLegend = legendEntry{"segment median", []plot.Thumbnailer{seg}}
		}
	}

	var changes *markers
	if len(t.ChangePoints) > 0 {
		changes = &markers{
			style: draw.LineStyle{Color: ChangePointColor, Width: vg.Points(1.5)},
			text:  textStyle(sans, textSize, ChangePointColor),
		}
		for _, c := range t.ChangePoints {
			changes.xs = append(changes.xs, float64(c.Index))
			changes.labels = append(changes.labels, fmt.Sprintf("%s %s", short(c.Commit), formatPct(c.ChangePct)))
		}
		p.Add(changes)
		f.band = func(c draw.Canvas) vg.Length { return changes.band(c, p) }
	}

	line, dots, err := plotter.NewLinePoints(medians)
	if err != nil {
		return nil, fmt.Errorf("chart: medians: %w", err)
	}
	line.Color = MedianColor
	line.Width = vg.Points(1.5)
	dots.Color = MedianColor
	dots.Shape = draw.CircleGlyph{}
	dots.Radius = vg.Points(2.5)
	p.Add(line)
	f.legend = append(f.legend, legendEntry{"median", []plot.Thumbnailer{line, dots}})

	if len(bars.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return nil, fmt.Errorf("chart: intervals: %w", err)
		}
		eb.Color = IntervalColor
		eb.Width = vg.Points(1.25)
		eb.CapWidth = vg.Points(7)
		p.Add(eb)
		label := strconv.FormatFloat(t.Confidence*100, 'f', -1, 64) + "% interval of the median"
		f.legend = append(f.legend, legendEntry{label, []plot.Thumbnailer{interval{eb.LineStyle, eb.CapWidth}}})
	}
	p.Add(dots) // over the intervals
	if segLegend.label != "" {
		f.legend = append(f.legend, segLegend)
	}
	if changes != nil {
		f.legend = append(f.legend, legendEntry{"change point", []plot.Thumbnailer{changes}})
	}

	if hi == lo {
		hi, lo = hi+math.Max(math.Abs(hi)*0.05, 1e-9), lo-math.Max(math.Abs(lo)*0.05, 1e-9)
	}
	p.Y.Min, p.Y.Max = lo-0.06*(hi-lo), hi+0.06*(hi-lo)
	return f, nil
}

// shaTicks labels the x axis with short SHAs, at most one every 90
// pixels, always the first commit; every commit gets a minor tick when
// there is room for them.
func shaTicks(t *analysis.Trend, width int) plot.ConstantTicks {
	n := len(t.Commits)
	labels := max(1, (width-120)/90)
	step := max(1, (n+labels-1)/labels)
	var ticks plot.ConstantTicks
	for i, c := range t.Commits {
		switch {
		case i%step == 0:
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: short(c.Commit)})
		case n <= width/6:
			ticks = append(ticks, plot.Tick{Value: float64(i)})
		}
	}
	return ticks
}

// errorBars are the commits with an interval: their medians and how far
// the interval reaches below and above.
type errorBars struct {
	plotter.XYs
	errs [][2]float64
}

func (e errorBars) YError(i int) (float64, float64) { return e.errs[i][0], e.errs[i][1] }

// markers draws change points: a vertical line across the plotting area
// at each x, and its label in a band of up to maxRows rows above the
// area, right of the line (left of it near the right edge), the line
// reaching up to its label. A label that finds no room is left out: the
// line, the trend's table and the text output still show the change
// point.
type markers struct {
	xs     []float64
	labels []string
	style  draw.LineStyle
	text   text.Style
}

const (
	maxRows  = 3
	labelGap = vg.Length(4) // between a line and its label, and between labels
)

// A placement is where a change point's label goes: its row above the
// plotting area, 0 nearest (-1: not drawn), and its left and right ends.
type placement struct {
	row    int
	x0, x1 vg.Length
}

// place places the labels over a plotting area whose x transform is
// trX: first those right of their lines, from the right, then those left
// of them, from the left; each in the lowest row where it overlaps no
// other label, no line that reaches a higher row crosses it and its own
// line crosses no label of a lower row; failing that, in the lowest row
// where it overlaps no other label (Plot backs labels in white, so a
// line then passes behind them); failing that, nowhere. In this order
// labels that crowd each other climb like stairs away from their lines,
// and lines cross none.
func (m *markers) place(c draw.Canvas, trX func(float64) vg.Length) []placement {
	out := make([]placement, len(m.xs))
	order := make([]int, len(m.xs))
	for i, x := range m.xs {
		order[i] = i
		px, w := trX(x), m.text.Width(m.labels[i])
		out[i] = placement{row: -1, x0: px + labelGap, x1: px + labelGap + w}
		if out[i].x1 > c.Max.X && px-labelGap-w >= c.Min.X {
			out[i].x0, out[i].x1 = px-labelGap-w, px-labelGap
		}
	}
	left := func(i int) bool { return out[i].x1 < trX(m.xs[i]) }
	sort.SliceStable(order, func(a, b int) bool {
		i, j := order[a], order[b]
		if left(i) != left(j) {
			return !left(i)
		}
		if left(i) {
			return m.xs[i] < m.xs[j]
		}
		return m.xs[i] > m.xs[j]
	})
	var placed []int
	for _, i := range order {
		px, pl := trX(m.xs[i]), out[i]
		free := func(r int, strict bool) bool {
			for _, j := range placed {
				o := out[j]
				switch {
				case o.row == r && pl.x0 < o.x1+labelGap && o.x0 < pl.x1+labelGap:
					return false
				case !strict:
				case o.row > r && pl.x0-labelGap <= trX(m.xs[j]) && trX(m.xs[j]) <= pl.x1+labelGap:
					return false
				case o.row < r && o.x0-labelGap <= px && px <= o.x1+labelGap:
					return false
				}
			}
			return true
		}
	search:
		for _, strict := range []bool{true, false} {
			for r := range maxRows {
				if free(r, strict) {
					pl.row = r
					break search
				}
			}
		}
		out[i] = pl
		if pl.row >= 0 {
			placed = append(placed, i)
		}
	}
	return out
}

// lineHeight is the height of a row of labels.
func (m *markers) lineHeight() vg.Length { return m.text.Height("Mg") * 1.2 }

// band returns the height of the rows of labels above the plotting area
// c of p.
func (m *markers) band(c draw.Canvas, p *plot.Plot) vg.Length {
	trX, _ := p.Transforms(&c)
	rows := 0
	for _, pl := range m.place(c, trX) {
		rows = max(rows, pl.row+1)
	}
	if rows == 0 {
		return 0
	}
	return vg.Length(rows)*m.lineHeight() + vg.Points(2)
}

func (m *markers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	lineH := m.lineHeight()
	places := m.place(c, trX)
	for i, x := range m.xs {
		top := c.Max.Y
		if r := places[i].row; r >= 0 {
			top += vg.Length(r+1) * lineH
		}
		c.StrokeLine2(m.style, trX(x), c.Min.Y, trX(x), top)
	}
	for i, pl := range places {
		if pl.row < 0 {
			continue
		}
		y := c.Max.Y + vg.Length(pl.row)*lineH
		c.SetColor(color.White)
		c.Fill(vg.Rectangle{Min: vg.Point{X: pl.x0 - 1, Y: y + 1}, Max: vg.Point{X: pl.x1 + 1, Y: y + lineH}}.Path())
		c.FillText(m.text, vg.Point{X: pl.x0, Y: y + lineH*0.1}, m.labels[i])
	}
}

// Thumbnail draws the legend's sample of a change point: a short
// vertical line.
func (m *markers) Thumbnail(c *draw.Canvas) { vertical{m.style}.Thumbnail(c) }

// vertical is a legend sample: a vertical line in its style.
type vertical struct{ style draw.LineStyle }

func (v vertical) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
}

// interval is a legend sample: an error bar with caps.
type interval struct {
	style draw.LineStyle
	cap   vg.Length
}

func (v interval) Thumbnail(c *draw.Canvas) {
	x := (c.Min.X + c.Max.X) / 2
	c.StrokeLine2(v.style, x, c.Min.Y, x, c.Max.Y)
	c.StrokeLine2(v.style, x-v.cap/2, c.Min.Y, x+v.cap/2, c.Min.Y)
	c.StrokeLine2(v.style, x-v.cap/2, c.Max.Y, x+v.cap/2, c.Max.Y)
}

func short(sha string) string {
	if len(sha) > 7 {
		return sha[:7]
	}
	return sha
}

func isFinite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }

// formatPct formats a change in percent as the text output does.
func formatPct(x float64) string {
	if !isFinite(x) {
		return "n/a"
	}
	return fmt.Sprintf("%+.1f%%", x)
}

// Package chart draws perfbot's charts as SVG or PNG images with
// gonum.org/v1/plot. In flows an analysis.Trend; out flow the image's
// bytes on an io.Writer. It is apart from analysis, which imports only
// the standard library and x/perf, so that the plotting library and its
// fonts stay out of everything but the commands that draw.
package chart

import (
	"fmt"
	"image"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
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
	IntervalColor    = color.RGBA{0x8f, 0xbb, 0xd9, 0xff}
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
// commit's interval of the median as an error bar (none where there were
// too few runs for one), each segment's median as a dashed grey line,
// and each change point as a vertical red line on its commit labelled
// with its short SHA and change. The x axis is the commit index in the
// trend's order, labelled with short SHAs at most every 90 pixels; the
// y axis is the unit, scaled as the text output scales it.
func Trend(w io.Writer, t *analysis.Trend, o Options) error {
	o, err := o.sized()
	if err != nil {
		return err
	}
	if len(t.Commits) == 0 {
		return fmt.Errorf("chart: the trend has no commits")
	}
	p, err := trendPlot(t, o.Width)
	if err != nil {
		return err
	}
	return render(w, p, o)
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

// render draws p in o's format and size and writes the image to w.
func render(w io.Writer, p *plot.Plot, o Options) error {
	var wt io.WriterTo
	switch o.Format {
	case SVG:
		c := vgsvg.New(pixels(o.Width), pixels(o.Height))
		p.Draw(draw.New(c))
		wt = c
	case PNG:
		c := vgimg.NewWith(vgimg.UseImage(image.NewRGBA(image.Rect(0, 0, o.Width, o.Height))), vgimg.UseDPI(dpi))
		p.Draw(draw.New(c))
		wt = vgimg.PngCanvas{Canvas: c}
	default:
		return fmt.Errorf("chart format %q: want one of %s", o.Format, strings.Join(Formats, ", "))
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("write %s chart: %w", o.Format, err)
	}
	return nil
}

// pixels converts pixels at dpi to a length.
func pixels(n int) vg.Length { return vg.Length(n) * vg.Inch / dpi }

func trendPlot(t *analysis.Trend, width int) (*plot.Plot, error) {
	factor, unit := t.AxisScale()
	n := len(t.Commits)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s on %s", t.Key, t.Machine)
	p.Title.TextStyle.Font.Size = vg.Points(10)
	p.Y.Label.Text = unit
	if t.Order == analysis.OrderFirstParent {
		p.X.Label.Text = fmt.Sprintf("commit (first-parent history of %s)", short(t.Head))
	} else {
		p.X.Label.Text = "commit (in the order of their first runs)"
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.X.Tick.Marker = shaTicks(t, width)
	p.Add(plotter.NewGrid())

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
	if len(bars.XYs) > 0 {
		eb, err := plotter.NewYErrorBars(bars)
		if err != nil {
			return nil, fmt.Errorf("chart: intervals: %w", err)
		}
		eb.Color = IntervalColor
		eb.CapWidth = vg.Points(3)
		p.Add(eb)
		p.Legend.Add(strconv.FormatFloat(t.Confidence*100, 'f', -1, 64)+"% interval of the median", vertical{eb.LineStyle})
	}
	for i, s := range t.Segments {
		seg, err := plotter.NewLine(plotter.XYs{
			{X: float64(s.Start) - 0.5, Y: s.Median / factor},
			{X: float64(s.End) - 0.5, Y: s.Median / factor},
		})
		if err != nil {
			return nil, fmt.Errorf("chart: segment: %w", err)
		}
		seg.Color = SegmentColor
		seg.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		p.Add(seg)
		if i == 0 {
			p.Legend.Add("segment median", seg)
		}
	}
	line, dots, err := plotter.NewLinePoints(medians)
	if err != nil {
		return nil, fmt.Errorf("chart: medians: %w", err)
	}
	line.Color = MedianColor
	line.Width = vg.Points(1.5)
	dots.Color = MedianColor
	dots.Shape = draw.CircleGlyph{}
	dots.Radius = vg.Points(2)
	p.Add(line, dots)
	p.Legend.Add("median", line, dots)

	if len(t.ChangePoints) > 0 {
		m := &markers{style: draw.LineStyle{Color: ChangePointColor, Width: vg.Points(1.2)}}
		m.text = text.Style{
			Color:   ChangePointColor,
			Font:    font.From(plot.DefaultFont, vg.Points(8)),
			XAlign:  draw.XLeft,
			YAlign:  draw.YTop,
			Handler: plot.DefaultTextHandler,
		}
		for _, c := range t.ChangePoints {
			m.xs = append(m.xs, float64(c.Index))
			m.labels = append(m.labels, fmt.Sprintf("%s %s", short(c.Commit), formatPct(c.ChangePct)))
		}
		p.Add(m)
		p.Legend.Add("change point", m)
	}

	// Room above the data for the legend and the change points' labels.
	if hi == lo {
		hi, lo = hi+math.Max(math.Abs(hi)*0.05, 1e-9), lo-math.Max(math.Abs(lo)*0.05, 1e-9)
	}
	p.Y.Min, p.Y.Max = lo-0.05*(hi-lo), hi+0.35*(hi-lo)
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.TextStyle.Font.Size = vg.Points(8)
	p.Legend.XOffs, p.Legend.YOffs = vg.Points(6), -vg.Points(4)
	return p, nil
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

// markers draws change points: a vertical line across the data area at
// each x, and its label beside the line's top (alternately a line lower,
// so that neighbours do not overwrite each other).
type markers struct {
	xs     []float64
	labels []string
	style  draw.LineStyle
	text   text.Style
}

func (m *markers) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	lineH := m.text.Font.Size * 1.3
	for i, x := range m.xs {
		px := trX(x)
		c.StrokeLine2(m.style, px, c.Min.Y, px, c.Max.Y)
		y := c.Max.Y - vg.Points(2) - vg.Length(i%2)*lineH
		c.FillText(m.text, vg.Point{X: px + vg.Points(3), Y: y}, m.labels[i])
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

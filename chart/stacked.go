package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// A Stack is what Stacked draws: for each commit, in order, the values of
// the parts that make up its bar, bottom part first.
type Stack struct {
	Title   string
	Unit    string      // the y axis label: the unit Values are in
	Commits []string    // the bars, by commit SHA
	Parts   []string    // the stacked parts, bottom first
	Values  [][]float64 // Values[i][j]: commit i, part j (0 when absent)
	// ChangeAt, optional, are the indexes in Commits where the trend of
	// the bars' totals found a change point: the first commit of each
	// new segment (analysis.TrendChange.Index of the total's trend).
	ChangeAt []int
}

// StackColors are the parts' colors, bottom first (matplotlib's tab10,
// which the trend chart's colors come from); a part past the tenth, or
// one named "other", is grey.
var StackColors = []color.RGBA{
	{0x1f, 0x77, 0xb4, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0xd6, 0x27, 0x28, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0xbc, 0xbd, 0x22, 0xff},
	{0x17, 0xbe, 0xcf, 0xff}, {0x7f, 0x7f, 0x7f, 0xff},
}

// OtherColor is the color of a part named "other".
var OtherColor = color.RGBA{0xc7, 0xc7, 0xc7, 0xff}

// StackChangeColor is the color of the dashed lines at a Stack's
// ChangeAt: dark, because red is a part's color.
var StackChangeColor = color.RGBA{0x22, 0x22, 0x22, 0xff}

// MinShare is the share of a bar below which a part is too thin to see:
// Stacked draws the parts below it at every commit as one, "other".
const MinShare = 0.03

// Stacked draws s as one bar per commit with its parts stacked bottom up,
// each part in its color (StackColors). Parts under MinShare of the bar
// at every commit join the part named "other", which is added on top
// when s has none and at least two parts are that small. A legend to
// the right of the plot (below it when the names are too long) lists the
// parts top first, as they are stacked. A dashed line before each
// commit of s.ChangeAt marks a change of the total. The x axis has the
// commits' short SHAs, at most one label every 80 pixels; the y axis
// starts at 0, with ticks at nice steps. In an SVG each bar segment is a
// path with a <title> child, the tooltip "part: value unit (share%)".
func Stacked(w io.Writer, s *Stack, o Options) error {
	o, err := o.sized()
	if err != nil {
		return err
	}
	n := len(s.Commits)
	if n == 0 || len(s.Parts) == 0 {
		return fmt.Errorf("stacked chart: no commits or no parts")
	}
	if len(s.Values) != n {
		return fmt.Errorf("stacked chart: %d commits but %d rows of values", n, len(s.Values))
	}
	for i, row := range s.Values {
		if len(row) != len(s.Parts) {
			return fmt.Errorf("stacked chart: commit %d has %d values for %d parts", i, len(row), len(s.Parts))
		}
		for j, v := range row {
			if v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
				return fmt.Errorf("stacked chart: commit %d, part %s: %v is not a length a bar can have", i, s.Parts[j], v)
			}
		}
	}
	for _, i := range s.ChangeAt {
		if i < 0 || i >= n {
			return fmt.Errorf("stacked chart: change at commit %d: want 0 to %d", i, n-1)
		}
	}
	g := group(s)

	p := newPlot(tickCount(o.Height))
	p.Title.Text = s.Title
	p.Y.Label.Text = s.Unit
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = 0, 0
	totals := make([]float64, n)
	for i, row := range g.values {
		for _, v := range row {
			totals[i] += v
		}
		p.Y.Max = math.Max(p.Y.Max, totals[i]*1.04)
	}
	if p.Y.Max == 0 { // every bar is empty
		p.Y.Max = 1
	}
	// About 260 pixels go to the y axis, the legend and the margins.
	every := max(1, (n*80+o.Width-261)/max(o.Width-260, 80))
	var ticks plot.ConstantTicks
	for i, c := range s.Commits {
		if i%every == 0 {
			ticks = append(ticks, plot.Tick{Value: float64(i), Label: short(c)})
		}
	}
	p.X.Tick.Marker = ticks
	p.Add(grid{})

	bars := &stackBars{values: g.values}
	var tooltips []string
	for i, row := range g.values {
		for j, v := range row {
			share := 0.0
			if totals[i] > 0 {
				share = v / totals[i] * 100
			}
			tooltips = append(tooltips, fmt.Sprintf("%s: %s (%.1f%%)", g.tipNames[j], withUnit(formatValue(v), s.Unit), share))
		}
	}
	f := &figure{p: p, right: true}
	for j, part := range g.parts {
		bars.colors = append(bars.colors, partColor(j, part))
	}
	p.Add(bars)
	for j := len(g.parts) - 1; j >= 0; j-- {
		f.legend = append(f.legend, legendEntry{g.labels[j], []plot.Thumbnailer{swatch{bars.colors[j]}}})
	}
	if len(s.ChangeAt) > 0 {
		cl := &changeLines{style: draw.LineStyle{
			Color: StackChangeColor, Width: vg.Points(1.5), Dashes: []vg.Length{vg.Points(5), vg.Points(3)},
		}}
		for _, i := range s.ChangeAt {
			cl.xs = append(cl.xs, float64(i)-0.5)
		}
		p.Add(cl)
		f.legend = append(f.legend, legendEntry{"change of the total", []plot.Thumbnailer{vertical{cl.style}}})
	}
	return render(w, f, o, tooltips)
}

// A grouping is a Stack's parts as drawn.
type grouping struct {
	parts    []string    // the parts, bottom first
	labels   []string    // their legend entries
	tipNames []string    // their names in tooltips
	values   [][]float64 // by commit, then part
}

// group merges the parts of s under MinShare of every bar into "other"
// when s has a part named "other" or at least two parts are that small.
func group(s *Stack) grouping {
	g := grouping{parts: s.Parts, labels: s.Parts, tipNames: s.Parts, values: s.Values}
	other := -1
	small := make([]bool, len(s.Parts))
	var merged []string
	for j, part := range s.Parts {
		if part == "other" {
			other = j
			continue
		}
		small[j] = true
		for _, row := range s.Values {
			total := 0.0
			for _, v := range row {
				total += v
			}
			if total > 0 && row[j] >= MinShare*total {
				small[j] = false
				break
			}
		}
		if small[j] {
			merged = append(merged, part)
		}
	}
	if len(merged) == 0 || other < 0 && len(merged) < 2 {
		return g
	}
	g = grouping{}
	index := make([]int, len(s.Parts)) // part j's index in g.parts
	at := -1                           // other's
	for j, part := range s.Parts {
		if small[j] {
			continue
		}
		if j == other {
			at = len(g.parts)
		}
		index[j] = len(g.parts)
		g.parts = append(g.parts, part)
	}
	if at < 0 {
		at = len(g.parts)
		g.parts = append(g.parts, "other")
	}
	for j := range s.Parts {
		if small[j] {
			index[j] = at
		}
	}
	for _, part := range g.parts {
		label, tip := part, part
		if part == "other" {
			label = fmt.Sprintf("other (incl. %d parts under %s)", len(merged), formatShare(MinShare))
			tip = "other (incl. " + strings.Join(merged, ", ") + ")"
		}
		g.labels = append(g.labels, label)
		g.tipNames = append(g.tipNames, tip)
	}
	for _, row := range s.Values {
		r := make([]float64, len(g.parts))
		for j, v := range row {
			r[index[j]] += v
		}
		g.values = append(g.values, r)
	}
	return g
}

// formatShare formats a fraction as a percentage: 0.03 is "3%".
func formatShare(f float64) string { return strconv.FormatFloat(f*100, 'f', -1, 64) + "%" }

// formatValue formats a bar segment's value with three significant
// digits: "812", "90.0", "4.00", "0.125".
func formatValue(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 10:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	default:
		return strconv.FormatFloat(v, 'g', 3, 64)
	}
}

func withUnit(v, unit string) string {
	if unit == "" {
		return v
	}
	return v + " " + unit
}

func partColor(j int, part string) color.RGBA {
	if part == "other" || j >= len(StackColors) {
		return OtherColor
	}
	return StackColors[j]
}

// stackBars draws the bars: for each commit, bottom up, each part's
// segment as one filled rectangle with a tooltip (fillWithTooltip), a
// zero-height one too, so that every part has a segment in every bar. A
// segment taller than 3 points leaves a white line of 1 point at its top,
// to set it apart from the next.
type stackBars struct {
	values [][]float64
	colors []color.RGBA
}

func (b *stackBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	half := min((trX(1)-trX(0))*0.35, vg.Points(30))
	for i, row := range b.values {
		x := trX(float64(i))
		sum := 0.0
		for j, v := range row {
			y0, y1 := trY(sum), trY(sum+v)
			if y1-y0 > vg.Points(3) {
				y1 -= vg.Points(1)
			}
			sum += v
			fillWithTooltip(c, vg.Rectangle{Min: vg.Point{X: x - half, Y: y0}, Max: vg.Point{X: x + half, Y: y1}}, b.colors[j])
		}
	}
}

// changeLines draws a vertical line across the plotting area at each x.
type changeLines struct {
	xs    []float64
	style draw.LineStyle
}

func (l *changeLines) Plot(c draw.Canvas, p *plot.Plot) {
	trX, _ := p.Transforms(&c)
	for _, x := range l.xs {
		c.StrokeLine2(l.style, trX(x), c.Min.Y, trX(x), c.Max.Y)
	}
}

// swatch is a legend sample: a square filled in its color.
type swatch struct{ color color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	side := c.Max.Y - c.Min.Y
	x := (c.Min.X + c.Max.X - side) / 2
	c.SetColor(s.color)
	c.Fill(vg.Rectangle{Min: vg.Point{X: x, Y: c.Min.Y}, Max: vg.Point{X: x + side, Y: c.Max.Y}}.Path())
}

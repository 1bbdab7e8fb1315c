package chart

import (
	"image/color"
	"strings"

	stdfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Every text is Liberation Sans, which gonum/plot embeds, so that a PNG
// looks the same on every machine; an SVG names it first and then
// Arial, which has the same metrics, and the generic sans-serif (see
// fixSVG). The fonts are set on each plot, not through plot.DefaultFont,
// so that charts drawn at once in one process do not share state.
var (
	sans     = font.Font{Typeface: "Liberation", Variant: "Sans"}
	sansBold = font.Font{Typeface: "Liberation", Variant: "Sans", Weight: stdfont.WeightBold}
)

// Text sizes in points. An SVG writes them as font-size:12px in its own
// units, which are points (see Options), so a browser shows them at 16
// CSS pixels in a chart at its natural size; a PNG at 96 dpi draws them
// 16 pixels high.
const (
	textSize  = 12
	titleSize = 14
)

// The colors of the frames and grid around the data.
var (
	frameColor = color.RGBA{0x99, 0x99, 0x99, 0xff} // the plotting area's border, 0.75 points
	gridColor  = color.RGBA{0xe3, 0xe3, 0xe3, 0xff}
	textColor  = color.RGBA{0x22, 0x22, 0x22, 0xff}
)

// Spacing, in points.
const (
	margin     = vg.Length(10) // around the whole image
	iconWidth  = vg.Length(24) // a legend entry's sample
	iconGap    = vg.Length(6)  // between the sample and its text
	entryGap   = vg.Length(20) // between entries in a row
	legendGap  = vg.Length(10) // between the plot and its legend
	rightShare = 0.3           // the widest legend beside the plot, as a share of the width
	belowShare = 0.3           // the highest legend below the plot, as a share of the height; a higher one is left out
)

// textStyle is the style of a chart's text in size points of Liberation
// Sans, aligned by its left and bottom.
func textStyle(f font.Font, size vg.Length, c color.Color) text.Style {
	return text.Style{
		Color:   c,
		Font:    font.From(f, size),
		XAlign:  draw.XLeft,
		YAlign:  draw.YBottom,
		Handler: plot.DefaultTextHandler,
	}
}

// newPlot returns a plot with the charts' fonts and frame: the title in
// bold, every other text textSize points; no axis lines, because the
// frame (added by figure.draw) borders the plotting area, and ticks
// pointing out of it; about ticks value ticks on the y axis
// (niceTicks); a grid of horizontal lines at them.
func newPlot(ticks int) *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil // figure.draw fills the whole image
	p.Title.TextStyle.Font = font.From(sansBold, titleSize)
	p.Title.TextStyle.Color = textColor
	p.Title.Padding = vg.Points(8)
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Label.TextStyle.Font = font.From(sans, textSize)
		a.Label.TextStyle.Color = textColor
		a.Label.Padding = vg.Points(4)
		a.Tick.Label.Font = font.From(sans, textSize)
		a.Tick.Label.Color = textColor
		a.Tick.LineStyle.Color = frameColor
		a.Tick.LineStyle.Width = vg.Points(0.75)
		a.Tick.Length = vg.Points(5)
		a.LineStyle.Width = 0
		a.Padding = 0
	}
	p.Y.Tick.Marker = niceTicks{want: ticks}
	p.Legend.TextStyle.Font = font.From(sans, textSize) // unused: figure draws the legend
	return p
}

// grid draws a horizontal line at each labelled y tick.
type grid struct{}

func (grid) Plot(c draw.Canvas, p *plot.Plot) {
	_, trY := p.Transforms(&c)
	sty := draw.LineStyle{Color: gridColor, Width: vg.Points(0.75)}
	for _, t := range p.Y.Tick.Marker.Ticks(p.Y.Min, p.Y.Max) {
		if t.IsMinor() || t.Value < p.Y.Min || t.Value > p.Y.Max {
			continue
		}
		y := trY(t.Value)
		c.StrokeLine2(sty, c.Min.X, y, c.Max.X, y)
	}
}

// frame borders the plotting area: one path in frameColor, the data
// rectangle, which tests find the plotting area by.
type frame struct{}

func (frame) Plot(c draw.Canvas, _ *plot.Plot) {
	r := c.Rectangle
	c.StrokeLines(draw.LineStyle{Color: frameColor, Width: vg.Points(0.75)}, []vg.Point{
		r.Min, {X: r.Max.X, Y: r.Min.Y}, r.Max, {X: r.Min.X, Y: r.Max.Y}, r.Min,
	})
}

// A legendEntry is a line of a legend: samples drawn over one another
// and a label.
type legendEntry struct {
	label  string
	thumbs []plot.Thumbnailer
}

// A figure lays out a plot, its legend outside the plotting area and,
// optionally, a band above the plotting area for labels.
type figure struct {
	p      *plot.Plot
	legend []legendEntry
	// right puts the legend beside the plot, one entry a line, when it
	// takes at most rightShare of the width and its entries fit the
	// plot's height; otherwise, and by default, it is below the x axis,
	// its entries in rows, or left out when the rows would take more
	// than belowShare of the height.
	right bool
	// band, when set, returns how much room the labels above a
	// plotting area the size of data need.
	band func(data draw.Canvas) vg.Length
}

// draw draws f on c: the background, the plot with its frame, and the
// legend. It sets up f.p for c, so it is called once.
func (f *figure) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())
	c = draw.Crop(c, margin, -margin, margin, -margin)
	f.p.Add(frame{})

	sty := textStyle(sans, textSize, textColor)
	lineH := sty.Height("Mg") * 1.25
	entryW := func(e legendEntry) vg.Length { return iconWidth + iconGap + sty.Width(e.label) }

	plotC := c
	colW := vg.Length(0)
	for _, e := range f.legend {
		colW = max(colW, entryW(e))
	}
	right := f.right && len(f.legend) > 0 && colW+legendGap <= vg.Length(rightShare)*c.Size().X
	if right {
		plotC = draw.Crop(c, 0, -(colW + legendGap), 0, 0)
		if f.p.DataCanvas(plotC).Size().Y < vg.Length(len(f.legend))*lineH {
			right, plotC = false, c // too many entries for the plot's height
		}
	}
	var rows [][]legendEntry
	if !right && len(f.legend) > 0 {
		rows = legendRows(f.legend, c.Size().X, entryW)
		h := vg.Length(len(rows))*lineH + legendGap
		if h > vg.Length(belowShare)*c.Size().Y {
			rows = nil // a thumbnail: its data matter more
		} else {
			plotC = draw.Crop(c, 0, 0, h, 0)
		}
	}
	f.p.Title.Text = wrap(f.p.Title.Text, f.p.Title.TextStyle, plotC.Size().X)
	if f.band != nil {
		if h := f.band(f.p.DataCanvas(plotC)); h > 0 {
			if f.p.Title.Text != "" {
				f.p.Title.Padding += h
			} else {
				plotC = draw.Crop(plotC, 0, 0, 0, -h)
			}
		}
	}
	data := f.p.DataCanvas(plotC)
	f.p.Draw(plotC)

	switch {
	case right:
		y := data.Max.Y
		for _, e := range f.legend {
			y -= lineH
			drawEntry(c, e, data.Max.X+legendGap, y, lineH, sty)
		}
	case len(rows) > 0:
		y := c.Min.Y + vg.Length(len(rows))*lineH
		for _, row := range rows {
			y -= lineH
			w := -entryGap
			for _, e := range row {
				w += entryW(e) + entryGap
			}
			// Centered under the plotting area, but within the image.
			x := max(c.Min.X, min((data.Min.X+data.Max.X-w)/2, c.Max.X-w))
			for _, e := range row {
				drawEntry(c, e, x, y, lineH, sty)
				x += entryW(e) + entryGap
			}
		}
	}
}

// legendRows packs entries into rows no wider than width, in order.
func legendRows(entries []legendEntry, width vg.Length, entryW func(legendEntry) vg.Length) [][]legendEntry {
	var rows [][]legendEntry
	var w vg.Length
	for _, e := range entries {
		ew := entryW(e)
		if n := len(rows); n > 0 && w+entryGap+ew <= width {
			rows[n-1] = append(rows[n-1], e)
			w += entryGap + ew
			continue
		}
		rows = append(rows, []legendEntry{e})
		w = ew
	}
	return rows
}

// drawEntry draws a legend entry in the line of height lineH whose
// bottom left is (x, y).
func drawEntry(c draw.Canvas, e legendEntry, x, y, lineH vg.Length, sty text.Style) {
	pad := lineH * 0.15
	icon := draw.Canvas{Canvas: c.Canvas, Rectangle: vg.Rectangle{
		Min: vg.Point{X: x, Y: y + pad},
		Max: vg.Point{X: x + iconWidth, Y: y + lineH - pad},
	}}
	for _, t := range e.thumbs {
		t.Thumbnail(&icon)
	}
	sty.YAlign = draw.YCenter
	c.FillText(sty, vg.Point{X: x + iconWidth + iconGap, Y: y + lineH/2}, e.label)
}

// wrap breaks s into at most two lines no wider than width where it
// can: after a slash or at a space, so that a long benchmark name in a
// title stays in the image. Where two lines are not enough, the first
// words give way to "…": the end of a title names the phase, the unit
// and the machine.
func wrap(s string, sty text.Style, width vg.Length) string {
	if s == "" || sty.Width(s) <= width {
		return s
	}
	var words []string // each ends at a break: after "/" or before " "
	start := 0
	for i, r := range s {
		switch {
		case r == '/':
			words = append(words, s[start:i+1])
			start = i + 1
		case r == ' ' && i > start:
			words = append(words, s[start:i])
			start = i
		}
	}
	words = append(words, s[start:])
	var lines []string
	line := ""
	for _, w := range words {
		if line != "" && sty.Width(line+w) > width {
			lines = append(lines, line)
			line = strings.TrimLeft(w, " ")
			continue
		}
		line += w
	}
	lines = append(lines, line)
	if len(lines) > 2 {
		lines = lines[len(lines)-2:]
		lines[0] = "…" + lines[0]
	}
	return strings.Join(lines, "\n")
}

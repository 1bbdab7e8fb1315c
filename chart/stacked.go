package chart

import (
	"fmt"
	"image/color"
	"io"
	"math"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// A Stack is what Stacked draws: for each commit, in order, the values of
// the parts that make up its bar, bottom part first.
type Stack struct {
	Title   string
	Unit    string      // the y axis label: the unit Values are in
	Commits []string    // the bars, by commit SHA
	Parts   []string    // the stacked parts, bottom first
	Values  [][]float64 // Values[i][j]: commit i, part j (0 when absent)
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

// Stacked draws s as one bar per commit with its parts stacked bottom up,
// each part in its color (StackColors) with a legend, and the commits'
// short SHAs on the x axis, at most one label every 60 pixels.
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
	p := plot.New()
	p.Title.Text = s.Title
	p.Y.Label.Text = s.Unit
	p.Y.Min = 0
	p.Legend.Top = true
	p.Legend.Left = false
	// Bars take 70% of their slot of the plotting area (the width less
	// about 150 pixels of axis and margins).
	barW := pixels(max(o.Width-150, 50)) * 0.7 / vg.Length(n)
	var below *plotter.BarChart
	for j, part := range s.Parts {
		vals := make(plotter.Values, n)
		for i := range s.Commits {
			vals[i] = s.Values[i][j]
		}
		bc, err := plotter.NewBarChart(vals, barW)
		if err != nil {
			return fmt.Errorf("stacked chart: part %s: %w", part, err)
		}
		bc.Color = partColor(j, part)
		bc.LineStyle.Width = 0
		if below != nil {
			bc.StackOn(below)
		}
		p.Add(bc)
		p.Legend.Add(part, bc)
		below = bc
	}
	every := max(1, n*60/max(o.Width, 1))
	labels := make([]string, n)
	for i, c := range s.Commits {
		if i%every == 0 {
			labels[i] = short(c)
		}
	}
	p.NominalX(labels...)
	return render(w, p, o)
}

func partColor(j int, part string) color.RGBA {
	if part == "other" || j >= len(StackColors) {
		return OtherColor
	}
	return StackColors[j]
}

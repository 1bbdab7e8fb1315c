package chart

import (
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
)

// niceSteps are the steps' mantissas a value axis may use, simplest
// first: 1, 5, 2 and 2.5 times a power of ten. 2.5 is there for ranges
// such as 500 to 1250, which read best as 500, 750, 1000, 1250.
var niceSteps = []float64{1, 5, 2, 2.5}

// niceTicks is a plot.Ticker for a value axis: about want ticks within
// the axis range, one step apart, the step a nice number (niceSteps),
// each labelled in the axis's unit with just the decimals its value
// needs ("2.5", "3", not "2.50", "3.00"). It chooses among the steps the
// way Talbot, Lin and Hanrahan's labelling does (doi:10.1109/TVCG.2010.130):
// by a weighted score of the step's simplicity, how much of the range
// the ticks cover and how close their number is to want.
type niceTicks struct{ want int }

// Ticks returns the ticks for the range min to max.
func (t niceTicks) Ticks(min, max float64) []plot.Tick {
	want := t.want
	if want < 2 {
		want = 2
	}
	if !(max > min) || !isFinite(min) || !isFinite(max) {
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 6, 64)}}
	}
	span := max - min
	base := int(math.Floor(math.Log10(span / float64(want))))
	type choice struct {
		first, last int // the ticks are first*step to last*step
		q           float64
		mag         int
		score       float64
	}
	var best *choice
	for mag := base - 1; mag <= base+1; mag++ {
		for i, q := range niceSteps {
			step := q * math.Pow10(mag)
			// A tolerance of a millionth of a step keeps a tick that
			// falls on the range's end by arithmetic's rounding.
			first := int(math.Ceil(min/step - 1e-6))
			last := int(math.Floor(max/step + 1e-6))
			if last-first < 1 {
				continue
			}
			lmin, lmax := float64(first)*step, float64(last)*step
			simplicity := 1 - float64(i)/float64(len(niceSteps)-1)
			if first <= 0 && last >= 0 {
				simplicity++ // zero is labelled
			}
			coverage := 1 - 0.5*(sq(max-lmax)+sq(min-lmin))/sq(0.1*span)
			r := float64(last-first) / (lmax - lmin)
			rt := float64(want-1) / span
			density := 2 - math.Max(r/rt, rt/r)
			score := 0.25*simplicity + 0.2*coverage + 0.5*density
			if best == nil || score > best.score {
				best = &choice{first, last, q, mag, score}
			}
		}
	}
	if best == nil { // the range is too narrow for two ticks of any step
		return []plot.Tick{{Value: min, Label: strconv.FormatFloat(min, 'g', 6, 64)}, {Value: max, Label: strconv.FormatFloat(max, 'g', 6, 64)}}
	}
	// Decimals that tell the ticks apart: as many as the step has.
	decimals := -best.mag
	if best.q != math.Trunc(best.q) {
		decimals++
	}
	ticks := make([]plot.Tick, 0, best.last-best.first+1)
	for k := best.first; k <= best.last; k++ {
		v := float64(k) * best.q * math.Pow10(best.mag)
		ticks = append(ticks, plot.Tick{Value: v, Label: formatTick(v, decimals)})
	}
	return ticks
}

// formatTick formats v rounded to decimals places (none when decimals
// is negative), without trailing zeros: 2.50 is "2.5", 3.00 is "3".
func formatTick(v float64, decimals int) string {
	s := strconv.FormatFloat(v, 'f', max(decimals, 0), 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	if s == "-0" {
		s = "0"
	}
	return s
}

func sq(x float64) float64 { return x * x }

// tickCount is how many value ticks suit a chart height in pixels:
// about one every 70 pixels of its plotting area, 3 to 9.
func tickCount(height int) int {
	return min(max((height-170+35)/70, 3), 9)
}

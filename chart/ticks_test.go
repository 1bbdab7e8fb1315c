package chart

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestNiceTicksAreNiceStepsLabelledWithTheDecimalsTheyNeed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		min, max float64
		want     int
		labels   string
	}{
		{500, 1250, 5, "500 750 1000 1250"}, // not 500.00 …
		{455, 1295, 5, "500 750 1000 1250"}, // the same data with an axis's margins
		{2.5, 5, 5, "2.5 3 3.5 4 4.5 5"},    // not 2.50 3.00 …
		{0.5, 1.25, 5, "0.5 0.75 1 1.25"},
		{0, 1040, 5, "0 250 500 750 1000"},
		{592, 784, 5, "600 650 700 750"},
		{97, 103, 5, "97 98 99 100 101 102 103"},
		{-3, 7, 5, "-2 0 2 4 6"},
		{0, 1, 3, "0 0.5 1"},
		{0.0012, 0.0047, 5, "0.0015 0.002 0.0025 0.003 0.0035 0.004 0.0045"},
	} {
		ticks := niceTicks{want: tc.want}.Ticks(tc.min, tc.max)
		var labels []string
		for i, tk := range ticks {
			labels = append(labels, tk.Label)
			v, err := strconv.ParseFloat(tk.Label, 64)
			if err != nil || math.Abs(v-tk.Value) > 1e-9*math.Max(1, math.Abs(v)) {
				t.Errorf("%v to %v: tick %v labelled %q", tc.min, tc.max, tk.Value, tk.Label)
			}
			if tk.Value < tc.min || tk.Value > tc.max {
				t.Errorf("%v to %v: tick %v is off the axis", tc.min, tc.max, tk.Value)
			}
			if i > 0 && math.Abs((tk.Value-ticks[i-1].Value)-(ticks[1].Value-ticks[0].Value)) > 1e-9*(tc.max-tc.min) {
				t.Errorf("%v to %v: ticks %v are not evenly spaced", tc.min, tc.max, ticks)
			}
		}
		if got := strings.Join(labels, " "); got != tc.labels {
			t.Errorf("%v to %v, about %d ticks: %q, want %q", tc.min, tc.max, tc.want, got, tc.labels)
		}
	}
}

func TestNiceTicksOfAnEmptyRangeIsOneTick(t *testing.T) {
	t.Parallel()
	ticks := niceTicks{want: 5}.Ticks(2.5, 2.5)
	if len(ticks) != 1 || ticks[0].Value != 2.5 || ticks[0].Label != "2.5" {
		t.Errorf("ticks %+v, want one at 2.5", ticks)
	}
}

func TestTickCountFollowsTheHeight(t *testing.T) {
	t.Parallel()
	for h, want := range map[int]int{200: 3, 360: 3, 500: 5, 700: 8, 10000: 9} {
		if got := tickCount(h); got != want {
			t.Errorf("tickCount(%d) = %d, want %d", h, got, want)
		}
	}
}

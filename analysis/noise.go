package analysis

import (
	"math"

	"github.com/perfbot/perfbot/analysis/stats"
)

// A Noise describes how much one series varies between runs of one
// revision, and so which change a comparison of n runs a side can detect.
type Noise struct {
	Key
	N      int     `json:"n"`      // runs
	Median float64 `json:"median"` // of the runs' values
	// CVPct is the coefficient of variation, 100·stddev/mean, in percent.
	CVPct float64 `json:"cv_pct"`
	// MADPct is the median absolute deviation relative to the median, in
	// percent: the robust counterpart of CVPct.
	MADPct float64 `json:"mad_pct"`
	// DetectablePct is the smallest change, in percent, that a comparison
	// of PerSide runs a side detects with 80% power at the options' alpha,
	// under a normal approximation corrected for Mann-Whitney U's
	// efficiency (3/π): (z(1−α/2) + z(0.8)) · √(2/n) · CV · √(π/3).
	DetectablePct float64 `json:"detectable_pct"`
	PerSide       int     `json:"per_side"`
	// alpha is the level DetectablePct was computed at, for RunsFor.
	alpha float64
}

// RunsFor returns how many runs a side a comparison needs to detect a
// change of pct percent with 80% power at the level DetectablePct used,
// by the same approximation (DetectablePct falls as 1/√n); 0 when the
// series does not vary.
func (n Noise) RunsFor(pct float64) int {
	if n.CVPct < 1e-9 || !(pct > 0) { // a constant series, up to rounding
		return 0
	}
	z := stats.NormalQuantile(1-n.alpha/2) + stats.NormalQuantile(0.8)
	d := z * n.CVPct * math.Sqrt(math.Pi/3) / pct
	return int(math.Ceil(2 * d * d))
}

// MeasureNoise summarizes the variation of every series across runs (ok
// runs only; each run counts once with its median per series) and the
// change a comparison with perSide runs a side could detect. Rows come in
// the order the series first appear.
func MeasureNoise(runs []Run, perSide int, opts Options) []Noise {
	opts = opts.withDefaults()
	var order []Key
	values := map[Key][]float64{}
	for _, r := range runs {
		if r.Status != StatusOK {
			continue
		}
		per := map[Key][]float64{}
		for _, s := range r.Samples {
			if math.IsNaN(s.Value) || math.IsInf(s.Value, 0) {
				continue
			}
			if _, seen := values[s.Key]; !seen {
				values[s.Key] = nil
				order = append(order, s.Key)
			}
			per[s.Key] = append(per[s.Key], s.Value)
		}
		for k, v := range per {
			values[k] = append(values[k], stats.MedianOf(v))
		}
	}
	z := stats.NormalQuantile(1-opts.Alpha/2) + stats.NormalQuantile(0.8)
	out := make([]Noise, 0, len(order))
	for _, k := range order {
		v := values[k]
		n := Noise{Key: k, N: len(v), PerSide: perSide, alpha: opts.Alpha}
		if len(v) == 0 {
			continue
		}
		n.Median = stats.MedianOf(v)
		mean, sd := stats.MeanStddev(v)
		if mean != 0 {
			n.CVPct = 100 * sd / math.Abs(mean)
		}
		if n.Median != 0 {
			dev := make([]float64, len(v))
			for i, x := range v {
				dev[i] = math.Abs(x - n.Median)
			}
			n.MADPct = 100 * stats.MedianOf(dev) / math.Abs(n.Median)
		}
		if perSide > 0 {
			n.DetectablePct = z * math.Sqrt(2/float64(perSide)) * n.CVPct * math.Sqrt(math.Pi/3)
		}
		out = append(out, n)
	}
	return out
}

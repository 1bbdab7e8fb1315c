package readers

import (
	"strings"
)

// secPerOp is the unit of every time a reader reports, in seconds.
const secPerOp = "sec/op"

// timeUnits maps the names of time units to seconds.
var timeUnits = map[string]float64{
	"ns":  1e-9,
	"us":  1e-6,
	"µs":  1e-6, // U+00B5 MICRO SIGN
	"μs":  1e-6, // U+03BC GREEK SMALL LETTER MU
	"ms":  1e-3,
	"s":   1,
	"sec": 1,
}

// unitOf returns the unit a value printed in u is reported in and the
// factor that converts it. A time ("ms"), or a time per operation or
// iteration ("ns/op", "ns/iter"), is sec/op; a name ending in a time
// ("synthesis_ms", "wall-s") is NAME-sec/op, so that several such times
// on one line stay apart; a unit holding a "/" stays as it is ("B/s");
// any other gets "/op" appended ("B" is "B/op"). Spaces become '_'.
func unitOf(u string) (string, float64) {
	u = tidyPart(u)
	if f, ok := timeUnits[u]; ok {
		return secPerOp, f
	}
	if t, per, ok := strings.Cut(u, "/"); ok {
		if f, isTime := timeUnits[t]; isTime && (per == "op" || per == "iter") {
			return secPerOp, f
		}
		return u, 1
	}
	if i := strings.LastIndexAny(u, "_-"); i > 0 {
		if f, ok := timeUnits[u[i+1:]]; ok {
			return u[:i] + "-" + secPerOp, f
		}
	}
	if u == "" {
		return "", 1
	}
	return u + "/op", 1
}

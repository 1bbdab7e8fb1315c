package readers

import (
	"bytes"
	"fmt"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/perfbot/perfbot/analysis"
)

// lines reads values out of a program's own lines with a regular
// expression, applied to each line of one stream. Every match (a line
// may hold several) is one value: group "value" is the number; group
// "benchmark", if the pattern has it and it matched, the benchmark (read
// by nameParts: "sort/1024" is "sort/arg0=1024"), else the config's Name;
// group "phase" the phase; group "unit", else the config's Unit, the unit
// (unitOf: times convert to sec/op).
//
// With the pattern `CUZK_TIMING (?P<phase>\w+)_(?P<unit>ms)=(?P<value>[0-9.]+)`
// and Name "cuzk", the line "CUZK_TIMING synthesis_ms=54712" is the value
// 54.712 of {Benchmark: "cuzk", Phase: "synthesis", Unit: "sec/op"}.
type lines struct {
	re           *regexp.Regexp
	stream       string
	unit, name   string
	value        int // the submatch index of each group, -1 if none
	bench, phase int
	unitGroup    int
}

// linesGroups lists the named groups a lines pattern may have.
var linesGroups = []string{"value", "benchmark", "phase", "unit"}

// newLines checks a "lines" config and returns its reader.
func newLines(c Config) (Reader, error) {
	if c.Pattern == "" {
		return nil, fmt.Errorf(`readers: format lines needs pattern: a regular expression with a group (?P<value>…), e.g. "CUZK_TIMING (?P<phase>\w+)_(?P<unit>ms)=(?P<value>[0-9.]+)"`)
	}
	re, err := regexp.Compile(c.Pattern)
	if err != nil {
		return nil, fmt.Errorf("readers: pattern %q does not compile: %w", c.Pattern, err)
	}
	l := &lines{re: re, stream: c.Stream, unit: c.Unit, name: c.Name, value: -1, bench: -1, phase: -1, unitGroup: -1}
	for i, g := range re.SubexpNames() {
		switch g {
		case "":
		case "value":
			l.value = i
		case "benchmark":
			l.bench = i
		case "phase":
			l.phase = i
		case "unit":
			l.unitGroup = i
		default:
			return nil, fmt.Errorf("readers: pattern %q has a group %q: the named groups are %s", c.Pattern, g, strings.Join(linesGroups, ", "))
		}
	}
	if l.value < 0 {
		return nil, fmt.Errorf("readers: pattern %q has no group (?P<value>…): it must capture the number", c.Pattern)
	}
	if l.stream == "" {
		l.stream = "stdout"
	}
	if !slices.Contains(Streams, l.stream) {
		return nil, fmt.Errorf("readers: stream %q is not one of %s", c.Stream, strings.Join(Streams, ", "))
	}
	if l.unitGroup < 0 && l.unit == "" {
		return nil, fmt.Errorf("readers: pattern %q has no group (?P<unit>…) and unit is empty: give unit, e.g. ms, s or B", c.Pattern)
	}
	if c.Unit != "" {
		if u, _ := unitOf(c.Unit); u == "" {
			return nil, fmt.Errorf("readers: unit %q is blank", c.Unit)
		}
	}
	if l.name == "" {
		l.name = DefaultLinesName
	}
	if splitName(l.name, false) == "" {
		return nil, fmt.Errorf("readers: name %q is blank", c.Name)
	}
	return l, nil
}

func (l *lines) Read(o Output) ([]analysis.Sample, error) {
	text := o.Stdout
	if l.stream == "stderr" {
		text = o.Stderr
	}
	var out []analysis.Sample
	for n, line := range bytes.Split(text, []byte("\n")) {
		line = bytes.TrimRight(line, "\r")
		for _, m := range l.re.FindAllSubmatchIndex(line, -1) {
			group := func(i int) string {
				if i < 0 || m[2*i] < 0 {
					return ""
				}
				return string(line[m[2*i]:m[2*i+1]])
			}
			raw := group(l.value)
			v, err := strconv.ParseFloat(strings.TrimSpace(raw), 64)
			if err != nil {
				return nil, fmt.Errorf("read lines: %s:%d: value %q is not a number: want the pattern's group value to capture a number such as 54712 or 1.5e-3", l.stream, n+1, raw)
			}
			u := group(l.unitGroup)
			if tidyPart(u) == "" {
				u = l.unit
			}
			unit, f := unitOf(u)
			if unit == "" {
				return nil, fmt.Errorf("read lines: %s:%d: the unit group matched nothing and the config gives no unit: want a unit", l.stream, n+1)
			}
			bench := splitName(group(l.bench), false)
			if bench == "" {
				bench = splitName(l.name, false)
			}
			if v *= f; math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			out = append(out, analysis.Sample{
				Key:   analysis.Key{Benchmark: bench, Phase: phaseName(group(l.phase)), Unit: unit},
				Value: v,
			})
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("read lines: no line of %s (%d bytes) matches the pattern `%s`: want lines such as it describes", l.stream, len(text), l.re)
	}
	return out, nil
}

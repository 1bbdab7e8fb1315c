package execute

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
	"time"

	"golang.org/x/perf/benchfmt"
	"golang.org/x/perf/benchunit"

	"github.com/perfbot/perfbot/analysis"
	"github.com/perfbot/perfbot/runner/readers"
)

// maxSyntaxErrors is how many syntax errors a parse keeps word for word;
// the rest are counted.
const maxSyntaxErrors = 10

// output is what a benchmark printed on standard output.
type output struct {
	samples      []analysis.Sample
	lines        []benchLine       // every result line, in order
	config       map[string]string // file configuration lines, the last value of each key
	syntaxErrors []string          // benchmark lines benchfmt could not parse, "stdout:LINE: why"
	warnings     []string
	spans        []analysis.Span // the span lines, in order
	readerErr    string          // why a reader found nothing (readOther)
}

// maxOtherOutput caps how much of stdout and stderr readOther reads: a
// reader's input is results, not logs.
const maxOtherOutput = 64 << 20

// readOther reads a run's results with r, a reader of another format,
// from the run's stdout and stderr (files, rewound here) and the files it
// wrote under dir since start. A reader that finds nothing leaves its
// reason in readerErr; only a failure to read the files is an error.
func readOther(r readers.Reader, stdout, stderr *os.File, dir string, start time.Time) (output, error) {
	o := readers.Output{Dir: dir, Start: start}
	for _, f := range []struct {
		file *os.File
		dst  *[]byte
	}{{stdout, &o.Stdout}, {stderr, &o.Stderr}} {
		if _, err := f.file.Seek(0, 0); err != nil {
			return output{}, fmt.Errorf("rewind output: %w", err)
		}
		b, err := io.ReadAll(io.LimitReader(f.file, maxOtherOutput))
		if err != nil {
			return output{}, fmt.Errorf("read output: %w", err)
		}
		*f.dst = b
	}
	if o.Dir == "" {
		o.Dir = "."
	}
	samples, err := r.Read(o)
	if err != nil {
		return output{readerErr: err.Error()}, nil
	}
	var out output
	for _, smp := range samples {
		if math.IsNaN(smp.Value) || math.IsInf(smp.Value, 0) {
			out.warnings = append(out.warnings, fmt.Sprintf("dropped non-finite value %v %s of %s", smp.Value, smp.Unit, smp.Benchmark))
			continue
		}
		out.samples = append(out.samples, smp)
	}
	return out, nil
}

// parseOutput reads r as Go benchmark format. Every value of every result
// line becomes a sample keyed by the result's benchmark, phase and tidied
// unit. Lines that are neither results nor configuration are ignored, as
// benchstat ignores them; result lines that do not parse are collected as
// syntax errors. A non-finite value is dropped with a warning.
func parseOutput(r io.Reader) (output, error) {
	out := output{config: map[string]string{}}
	nSyntax := 0
	spans := &spanReader{}
	br := benchfmt.NewReader(io.TeeReader(r, spans), "stdout")
	for br.Scan() {
		switch rec := br.Result().(type) {
		case *benchfmt.Result:
			// The reader reuses rec: copy everything kept.
			for _, c := range rec.Config {
				if c.File {
					out.config[c.Key] = string(c.Value)
				}
			}
			bench, phase := analysis.SplitName(rec.Name)
			out.lines = append(out.lines, benchLine{bench, phase, rec.Iters})
			for _, v := range rec.Values {
				if math.IsNaN(v.Value) || math.IsInf(v.Value, 0) {
					file, line := rec.Pos()
					out.warnings = append(out.warnings, fmt.Sprintf("%s:%d: dropped non-finite value %v %s", file, line, v.Value, v.Unit))
					continue
				}
				// benchfmt keeps a value's own unit when tidying leaves
				// the value as it was — a 0 — so "0 ns/op" would be a
				// series apart from the phase's sec/op: tidy the unit
				// itself.
				value, unit := v.Value, v.Unit
				if _, tidy := benchunit.Tidy(1, unit); tidy != unit {
					value, unit = benchunit.Tidy(value, unit)
				}
				out.samples = append(out.samples, analysis.Sample{
					Key:   analysis.Key{Benchmark: bench, Phase: phase, Unit: unit},
					Value: value,
				})
			}
		case *benchfmt.SyntaxError:
			nSyntax++
			if nSyntax <= maxSyntaxErrors {
				out.syntaxErrors = append(out.syntaxErrors, rec.Error())
			}
		}
		// *benchfmt.UnitMetadata ("Unit ns/op assume=exact") is not kept.
	}
	if nSyntax > maxSyntaxErrors {
		out.syntaxErrors = append(out.syntaxErrors, fmt.Sprintf("and %d more syntax errors", nSyntax-maxSyntaxErrors))
	}
	if err := br.Err(); err != nil {
		return out, fmt.Errorf("read benchmark output: %w", err)
	}
	spans.flush()
	out.spans = spans.spans
	out.warnings = append(out.warnings, spans.warnings...)
	if spans.bad > maxSyntaxErrors {
		out.warnings = append(out.warnings, fmt.Sprintf("and %d more span lines that do not parse", spans.bad-maxSyntaxErrors))
	}
	return out, nil
}

// SpanPrefix starts a span line: "# perfbot-span NAME proof=N
// start_ns=A end_ns=B [lane=L] [waits=P]", where NAME is the benchmark
// name of the phase's result line (without "Benchmark"), A and B are
// nanoseconds from the start of proof N, lane names the worker of a phase
// that ran beside the proof's own thread of control, and waits the phase
// a wait stood still for (prover.SpanPrefix prints them).
const SpanPrefix = "# perfbot-span "

// A spanReader picks the span lines out of what it is written, line by
// line: the benchmark output, as benchfmt reads it.
type spanReader struct {
	partial  []byte
	line     int
	spans    []analysis.Span
	warnings []string
	bad      int
}

func (s *spanReader) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			s.partial = append(s.partial, p...)
			break
		}
		s.partial = append(s.partial, p[:i]...)
		s.take()
		p = p[i+1:]
	}
	return n, nil
}

// flush takes a last line that had no newline.
func (s *spanReader) flush() {
	if len(s.partial) > 0 {
		s.take()
	}
}

func (s *spanReader) take() {
	s.line++
	line := string(s.partial)
	s.partial = s.partial[:0]
	rest, ok := strings.CutPrefix(line, SpanPrefix)
	if !ok {
		return
	}
	sp, err := parseSpan(rest)
	if err != nil {
		s.bad++
		if s.bad <= maxSyntaxErrors {
			s.warnings = append(s.warnings, fmt.Sprintf("stdout:%d: span line dropped: %v", s.line, err))
		}
		return
	}
	s.spans = append(s.spans, sp)
}

// parseSpan parses what follows SpanPrefix.
func parseSpan(s string) (analysis.Span, error) {
	f := strings.Fields(s)
	if len(f) == 0 {
		return analysis.Span{}, fmt.Errorf("want NAME proof=N start_ns=A end_ns=B, got %q", s)
	}
	var sp analysis.Span
	sp.Benchmark, sp.Phase = analysis.SplitName([]byte(f[0]))
	if sp.Phase == "" {
		return sp, fmt.Errorf("%s has no phase=… part", f[0])
	}
	var start, end int64 = -1, -1
	proof := -1
	for _, kv := range f[1:] {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || v == "" {
			return sp, fmt.Errorf("%q is not key=value", kv)
		}
		var err error
		switch k {
		case "proof":
			proof, err = strconv.Atoi(v)
		case "start_ns":
			start, err = strconv.ParseInt(v, 10, 64)
		case "end_ns":
			end, err = strconv.ParseInt(v, 10, 64)
		case "lane":
			sp.Lane = v
		case "waits":
			sp.Waits = v
		default:
			// A later version's field: ignore it.
		}
		if numeric := k == "proof" || k == "start_ns" || k == "end_ns"; numeric && (err != nil || strings.HasPrefix(v, "-")) {
			return sp, fmt.Errorf("%s=%s is not a whole number ≥ 0", k, v)
		}
	}
	switch {
	case proof < 0 || start < 0 || end < 0:
		return sp, fmt.Errorf("%s: proof, start_ns and end_ns are all needed", f[0])
	case end < start:
		return sp, fmt.Errorf("%s: ends (%d ns) before it starts (%d ns)", f[0], end, start)
	}
	sp.Proof, sp.Start, sp.End = proof, float64(start)/1e9, float64(end)/1e9
	return sp, nil
}

// A benchLine is one result line of a benchmark's output: its benchmark
// and phase (as in analysis.Key) and its iteration count.
type benchLine struct {
	benchmark, phase string
	iters            int
}

// readTail returns at most n bytes from the end of f, starting at a line
// boundary when it had to cut, and whether it cut.
func readTail(f *os.File, n int) (string, bool, error) {
	fi, err := f.Stat()
	if err != nil {
		return "", false, err
	}
	size := fi.Size()
	off := max(size-int64(n), 0)
	cut := off > 0
	if cut {
		off-- // read the byte before the tail to see whether a line ends there
	}
	buf := make([]byte, size-off)
	if _, err := f.ReadAt(buf, off); err != nil && err != io.EOF {
		return "", false, err
	}
	if cut {
		if i := bytes.IndexByte(buf, '\n'); i >= 0 && i < len(buf)-1 {
			buf = buf[i+1:]
		} else {
			buf = buf[1:] // one line longer than the tail: keep its end
		}
	}
	return strings.ToValidUTF8(string(buf), "\uFFFD"), cut, nil
}

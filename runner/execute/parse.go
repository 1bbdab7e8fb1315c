package execute

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strings"

	"golang.org/x/perf/benchfmt"

	"github.com/perfbot/perfbot/analysis"
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
}

// parseOutput reads r as Go benchmark format. Every value of every result
// line becomes a sample keyed by the result's benchmark, phase and tidied
// unit. Lines that are neither results nor configuration are ignored, as
// benchstat ignores them; result lines that do not parse are collected as
// syntax errors. A non-finite value is dropped with a warning.
func parseOutput(r io.Reader) (output, error) {
	out := output{config: map[string]string{}}
	nSyntax := 0
	br := benchfmt.NewReader(r, "stdout")
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
				out.samples = append(out.samples, analysis.Sample{
					Key:   analysis.Key{Benchmark: bench, Phase: phase, Unit: v.Unit},
					Value: v.Value,
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
	return out, nil
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

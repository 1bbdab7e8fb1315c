package prover

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// A Header is the file configuration printed before the benchmark lines.
// benchstat splits its tables by file configuration, so only keys that are
// equal for a base and a head run of one variant belong here: a variant
// switch such as lc-storage does belong, and keeps the two variants' runs
// out of one table (benchstat -col lc-storage heap.txt inline.txt sets
// them side by side). perfbot compare keys its series by benchmark name,
// phase and unit, not by these lines.
type Header struct {
	GOOS, GOARCH string
	CPU          string // model name
	GPU          string // device name; empty when no GPU backend ran
	Backend      string // the backend that ran
	SRS          string // "setup" or "random"
	LCStorage    string // "heap" or "inline" (--lc-storage)
	// Pipeline is "off: why" when --pipeline was asked for and the
	// proofs ran one after another (Info.PipelineOff); empty otherwise.
	Pipeline string
}

// HostHeader returns the header for this host and the given backend; gpu
// is the device's name when the GPU backend runs.
func HostHeader(backend, gpu, srs string) Header {
	return Header{
		GOOS:    runtime.GOOS,
		GOARCH:  runtime.GOARCH,
		CPU:     cpuModel(),
		GPU:     gpu,
		Backend: backend,
		SRS:     srs,
	}
}

// WriteHeader writes h as benchmark-format configuration lines.
func WriteHeader(w io.Writer, h Header) error {
	var sb strings.Builder
	line := func(k, v string) {
		if v != "" {
			fmt.Fprintf(&sb, "%s: %s\n", k, v)
		}
	}
	line("goos", h.GOOS)
	line("goarch", h.GOARCH)
	line("cpu", h.CPU)
	line("gpu", h.GPU)
	line("backend", h.Backend)
	line("srs", h.SRS)
	line("lc-storage", h.LCStorage)
	line("pipeline", h.Pipeline)
	_, err := io.WriteString(w, sb.String())
	return err
}

// BenchName returns the benchmark name of one phase, without the
// "Benchmark" prefix: Prove/circuit=C/constraints=N/backend=B/phase=P.
// constraints is the size that was asked for, so the name stays the same
// when a revision changes the circuit's real count (reported as a unit).
func BenchName(circuit string, constraints int, backend, phase string) string {
	return fmt.Sprintf("Prove/circuit=%s/constraints=%d/backend=%s/phase=%s", circuit, constraints, backend, phase)
}

// PipelineName returns the benchmark name of a pipelined run's throughput,
// without the "Benchmark" prefix:
// Prove/circuit=C/constraints=N/backend=B/pipeline=K, K the proofs in the
// pipeline (a pipeline's fill and drain weigh less the longer it is, so
// runs of different lengths are different benchmarks). It has no phase=
// part: it is not a phase inside total, and perfbot compare keeps it out
// of total's attribution as a benchmark of its own.
func PipelineName(circuit string, constraints int, backend string, proofs int) string {
	return fmt.Sprintf("Prove/circuit=%s/constraints=%d/backend=%s/pipeline=%d", circuit, constraints, backend, proofs)
}

// WritePipeline writes a pipelined run's throughput as one benchmark
// line, after its proofs' lines:
//
//	BenchmarkProve/circuit=sha256/constraints=65536/backend=cpu/pipeline=4 4 812000000 ns/op 1.23 proofs/s 2.1e+09 peak-rss-B/op …
//
// The iterations are the K proofs and ns/op the pipeline's wall time over
// K, so that benchstat's sec/op is the time per proof; then t's metrics.
func WritePipeline(w io.Writer, circuit string, constraints int, backend string, t Throughput) error {
	var sb strings.Builder
	fmt.Fprintf(&sb, "Benchmark%s %d %d ns/op", PipelineName(circuit, constraints, backend, t.Proofs), t.Proofs,
		t.Wall.Nanoseconds()/int64(max(t.Proofs, 1)))
	for _, x := range t.Metrics {
		sb.WriteString(" " + formatValue(x.Value) + " " + x.Unit)
	}
	sb.WriteByte('\n')
	_, err := io.WriteString(w, sb.String())
	return err
}

// WriteProof writes proof index's lines: one benchmark line per
// measurement (iterations 1, ns/op, then the measurement's extra metrics),
// then one span line per measurement (see WriteSpans).
func WriteProof(w io.Writer, circuit string, constraints int, backend string, index int, ms []Measurement) error {
	var sb strings.Builder
	for i := range ms {
		m := &ms[i]
		sb.WriteString("Benchmark")
		sb.WriteString(BenchName(circuit, constraints, backend, m.Phase))
		sb.WriteString(" 1 ")
		sb.WriteString(strconv.FormatInt(m.Elapsed.Nanoseconds(), 10))
		sb.WriteString(" ns/op")
		for _, x := range m.Metrics {
			sb.WriteByte(' ')
			sb.WriteString(formatValue(x.Value))
			sb.WriteByte(' ')
			sb.WriteString(x.Unit)
		}
		sb.WriteByte('\n')
	}
	writeSpans(&sb, circuit, constraints, backend, index, ms)
	_, err := io.WriteString(w, sb.String())
	return err
}

// SpanPrefix starts every span line. A span line says when one phase of
// one proof ran, on the clock the proof's phases share, in nanoseconds
// from the start of its total:
//
//	# perfbot-span Prove/…/phase=msm_b2 proof=0 start_ns=512000000 end_ns=912000000 lane=host
//	# perfbot-span Prove/…/phase=msm_b2_wait proof=0 start_ns=880000000 end_ns=912000000 waits=msm_b2
//
// lane is absent for the proof's own thread of control (one phase after
// another) and names the worker of a phase that ran beside it; waits names
// the phase a wait stood still for. In a pipelined run synthesis is on
// lane host: it ran beside the previous proof, and the proof's own thread
// of control took the witness from there (see runPipeline). Go benchmark format ignores the lines
// (they are neither results nor configuration), so benchstat reads the
// output unchanged; perfbot's runner keeps them with the run, and
// analysis builds each proof's critical path from them.
const SpanPrefix = "# perfbot-span "

func writeSpans(sb *strings.Builder, circuit string, constraints int, backend string, index int, ms []Measurement) {
	if len(ms) == 0 {
		return
	}
	origin := ms[len(ms)-1].Start // total's
	for i := range ms {
		if ms[i].Start.Before(origin) {
			origin = ms[i].Start
		}
	}
	for i := range ms {
		m := &ms[i]
		sb.WriteString(SpanPrefix)
		sb.WriteString(BenchName(circuit, constraints, backend, m.Phase))
		fmt.Fprintf(sb, " proof=%d start_ns=%d end_ns=%d", index, m.Start.Sub(origin).Nanoseconds(), m.End().Sub(origin).Nanoseconds())
		if m.Lane != "" {
			sb.WriteString(" lane=" + m.Lane)
		}
		if m.Waits != "" {
			sb.WriteString(" waits=" + m.Waits)
		}
		sb.WriteByte('\n')
	}
}

func formatValue(v float64) string {
	if v == float64(int64(v)) && v < 1e15 && v > -1e15 {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', 6, 64)
}

// cpuModel returns the CPU's model name from /proc/cpuinfo, or "" when it
// cannot be read (not Linux).
func cpuModel() string {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

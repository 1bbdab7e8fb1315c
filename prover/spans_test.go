package prover

import (
	"bufio"
	"context"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/perfbot/perfbot/prover/circuit"
	"github.com/perfbot/perfbot/prover/groth16"
)

// overlapping is the CPU engine saying it offloads the G1 MSMs, as the GPU
// engine does, so that Prove runs msm_b2 beside them.
type overlapping struct{ groth16.CPU }

func (overlapping) OffloadsG1() bool { return true }

func proveForSpans(t *testing.T, eng groth16.Engine) ProofResult {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	circ, keys := testChain(t, rng, circuit.BlocksFor(1<<10), false)
	res, err := proveOnce(context.Background(), newMeter(), Config{Phases: "all", Verify: true}, circ, keys, circ.Sizes(), rng, eng)
	if err != nil {
		t.Fatalf("proveOnce: %v", err)
	}
	return res
}

func TestSpansOfAnOffloadedProofShowMSMB2BesideTheG1MSMs(t *testing.T) {
	res := proveForSpans(t, overlapping{})
	var names []string
	at := map[string]*Measurement{}
	for i := range res.Measurements {
		m := &res.Measurements[i]
		names = append(names, m.Phase)
		at[m.Phase] = m
	}
	want := []string{PhaseSynthesis, PhaseNTT, PhaseMSMA, PhaseMSMB1, PhaseMSML, PhaseMSMH, PhaseMSMB2, PhaseMSMB2Wait, PhaseAssemble, PhaseTotal}
	if !slices.Equal(names, want) {
		t.Fatalf("lines %v, want %v", names, want)
	}
	b2, wait := at[PhaseMSMB2], at[PhaseMSMB2Wait]
	if b2.Lane != LaneHost || b2.Waits != "" || wait.Lane != "" || wait.Waits != PhaseMSMB2 {
		t.Errorf("msm_b2 lane %q waits %q, msm_b2_wait lane %q waits %q; want msm_b2 on lane host and the wait waiting for it",
			b2.Lane, b2.Waits, wait.Lane, wait.Waits)
	}
	// The main lane runs one phase after another, inside total.
	total := at[PhaseTotal]
	var prev *Measurement
	for i := range res.Measurements {
		m := &res.Measurements[i]
		if m.Phase == PhaseTotal || m.Lane != "" {
			continue
		}
		if m.Start.Before(total.Start) || m.End().After(total.End()) {
			t.Errorf("%s [%v, %v] outside total [%v, %v]", m.Phase, m.Start, m.End(), total.Start, total.End())
		}
		if prev != nil && m.Start.Before(prev.End()) {
			t.Errorf("%s starts before %s ends", m.Phase, prev.Phase)
		}
		prev = m
	}
	// msm_b2 starts inside msm_a and is done when its wait ends.
	if b2.Start.Before(at[PhaseMSMA].Start) || !b2.Start.Before(at[PhaseMSMA].End()) {
		t.Errorf("msm_b2 starts at %v, not inside msm_a [%v, %v]", b2.Start, at[PhaseMSMA].Start, at[PhaseMSMA].End())
	}
	if b2.End().After(wait.End()) {
		t.Errorf("msm_b2 ends at %v, after its wait ends (%v)", b2.End(), wait.End())
	}
	// The chain's B scalars are all 0 or 1: the G2 MSM sums its ones.
	if v, ok := b2.Metric("ones/op"); !ok || v <= 0 {
		t.Errorf("msm_b2 has no ones/op (%v, %v): the G2 MSM's sizes belong on its line", v, ok)
	}
}

func TestSpansOfTheCPUBackendAreOneLane(t *testing.T) {
	res := proveForSpans(t, nil)
	for _, m := range res.Measurements {
		if m.Lane != "" || m.Waits != "" || m.Phase == PhaseMSMB2Wait {
			t.Errorf("%s: lane %q waits %q; the CPU backend runs every phase in turn", m.Phase, m.Lane, m.Waits)
		}
	}
}

func TestWriteProofPrintsASpanLinePerPhase(t *testing.T) {
	res := proveForSpans(t, overlapping{})
	var sb strings.Builder
	if err := WriteProof(&sb, "sha256", 1024, "gpu", 3, res.Measurements); err != nil {
		t.Fatal(err)
	}
	var spans []string
	sc := bufio.NewScanner(strings.NewReader(sb.String()))
	for sc.Scan() {
		if l, ok := strings.CutPrefix(sc.Text(), SpanPrefix); ok {
			spans = append(spans, l)
		}
	}
	if len(spans) != len(res.Measurements) {
		t.Fatalf("%d span lines for %d measurements:\n%s", len(spans), len(res.Measurements), sb.String())
	}
	origin := res.Measurements[len(res.Measurements)-1].Start
	for i, l := range spans {
		m := res.Measurements[i]
		f := strings.Fields(l)
		if f[0] != BenchName("sha256", 1024, "gpu", m.Phase) || f[1] != "proof=3" {
			t.Errorf("span %d: %q", i, l)
			continue
		}
		kv := map[string]string{}
		for _, x := range f[2:] {
			k, v, _ := strings.Cut(x, "=")
			kv[k] = v
		}
		start, _ := strconv.ParseInt(kv["start_ns"], 10, 64)
		end, _ := strconv.ParseInt(kv["end_ns"], 10, 64)
		if start != m.Start.Sub(origin).Nanoseconds() || end-start != m.Elapsed.Nanoseconds() || kv["lane"] != m.Lane || kv["waits"] != m.Waits {
			t.Errorf("span %d %q: want start %d, length %d, lane %q, waits %q", i, l, m.Start.Sub(origin).Nanoseconds(), m.Elapsed.Nanoseconds(), m.Lane, m.Waits)
		}
	}
}

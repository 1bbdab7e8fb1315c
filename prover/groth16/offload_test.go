package groth16

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// offloadingCPU is the CPU engine saying it offloads G1, as the GPU engine
// does: it records what Prove hands it.
type offloadingCPU struct {
	CPU
	mu     sync.Mutex
	g1     []int // lengths of the G1 MSMs
	g2     int   // G2 MSMs
	kept   [][]bls12381.G1Affine
	onKept int // G1 MSMs whose points are a kept slice's memory
}

func (o *offloadingCPU) KeepG1(points []bls12381.G1Affine) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.kept = append(o.kept, points)
}

func (o *offloadingCPU) OffloadsG1() bool { return true }

func (o *offloadingCPU) MultiExpG1(points []bls12381.G1Affine, scalars []fr.Element) (bls12381.G1Jac, error) {
	o.mu.Lock()
	o.g1 = append(o.g1, len(points))
	for _, k := range o.kept {
		if len(points) > 0 && len(points) <= len(k) && &points[0] == &k[0] {
			o.onKept++
			break
		}
	}
	o.mu.Unlock()
	return o.CPU.MultiExpG1(points, scalars)
}

func (o *offloadingCPU) MultiExpG2(points []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	o.mu.Lock()
	o.g2++
	o.mu.Unlock()
	return o.CPU.MultiExpG2(points, scalars)
}

func TestOffloadingEngineGetsWholeG1MSMsAndG2RunsBesideThem(t *testing.T) {
	f := smallFixture(t)
	eng := &offloadingCPU{}
	var phases, beside []string
	proof, st, err := Prove(context.Background(), f.pk, f.cs, randScalar(t), randScalar(t), ProveOptions{
		Engine: eng,
		// On its own goroutine, beside the phases: it sees the G2 MSM run
		// inside run, and only there.
		Beside: func(name string, run func()) {
			eng.mu.Lock()
			before := eng.g2
			eng.mu.Unlock()
			run()
			eng.mu.Lock()
			beside = append(beside, fmt.Sprintf("%s: %d G2 MSMs", name, eng.g2-before))
			eng.mu.Unlock()
		},
		Phase: func(name string, run func() error) error {
			phases = append(phases, name)
			return run()
		},
	})
	if err != nil {
		t.Fatalf("Prove: %v", err)
	}
	if err := Verify(f.vk, proof, publicInputs(f.cs)); err != nil {
		t.Fatalf("Verify(offloaded proof) = %v, want nil", err)
	}
	wantPhases := []string{PhaseNTT, PhaseMSMA, PhaseMSMB1, PhaseMSML, PhaseMSMH, PhaseMSMB2Wait, PhaseAssemble}
	if !slices.Equal(phases, wantPhases) {
		t.Errorf("phases %v, want %v (the wait for msm_b2 comes after the G1 MSMs)", phases, wantPhases)
	}
	if want := []string{PhaseMSMB2 + ": 1 G2 MSMs"}; !slices.Equal(beside, want) {
		t.Errorf("beside %v, want %v: msm_b2 run once, through Beside", beside, want)
	}
	// Every term of A, B1, L and H went to the engine: no 0/1 split.
	wantG1 := []int{len(f.pk.A), len(f.pk.B1), len(f.pk.L), f.pk.DomainSize - 1}
	if !slices.Equal(eng.g1, wantG1) {
		t.Errorf("G1 MSM lengths %v, want the whole queries %v", eng.g1, wantG1)
	}
	for name, s := range map[string]MSMStats{"A": st.A, "B1": st.B1, "L": st.L, "H": st.H} {
		if s.MultiExp != s.Points || s.Zeros+s.Ones+s.Infinity != 0 {
			t.Errorf("%s stats %+v: want every point in the MultiExp", name, s)
		}
	}
	// Each G1 MSM's points were offered to the Keeper first (the proving
	// key's queries themselves, which is how a GPU engine finds them kept),
	// and the MSM ran on that memory.
	if len(eng.kept) != 4 || eng.onKept != 4 {
		t.Errorf("kept %d slices, %d MSMs on kept memory; want the 4 G1 queries, each used by its MSM", len(eng.kept), eng.onKept)
	}
	for i, q := range [][]bls12381.G1Affine{f.pk.A, f.pk.B1, f.pk.L, f.pk.H} {
		if i < len(eng.kept) && (len(eng.kept[i]) != len(q) || &eng.kept[i][0] != &q[0]) {
			t.Errorf("kept slice %d (%d points) is not the proving key's query %d (%d points)", i, len(eng.kept[i]), i, len(q))
		}
	}
	// G2 ran once, on the host, with the 0/1 split.
	if eng.g2 != 1 {
		t.Errorf("%d G2 MSMs, want 1", eng.g2)
	}
	if st.B2.MultiExp == st.B2.Points {
		t.Errorf("B2 stats %+v: the G2 MSM should keep the 0/1 split", st.B2)
	}
}

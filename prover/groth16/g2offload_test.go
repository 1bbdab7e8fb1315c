package groth16

import (
	"context"
	"strings"
	"testing"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// g2OffloadingCPU is the CPU engine saying it offloads G1 and G2, as the
// GPU engine does with PERFBOT_G2=gpu: it records the G2 MSMs' lengths.
type g2OffloadingCPU struct {
	offloadingCPU
	g2Lens []int
	kept2  [][]bls12381.G2Affine
}

func (o *g2OffloadingCPU) KeepG2(points []bls12381.G2Affine) { o.kept2 = append(o.kept2, points) }

func (o *g2OffloadingCPU) OffloadsG2() bool { return true }

func (o *g2OffloadingCPU) MultiExpG2(points []bls12381.G2Affine, scalars []fr.Element) (bls12381.G2Jac, error) {
	o.mu.Lock()
	o.g2Lens = append(o.g2Lens, len(points))
	o.mu.Unlock()
	return o.offloadingCPU.MultiExpG2(points, scalars)
}

func TestG2OffloadingEngineGetsTheWholeG2MSM(t *testing.T) {
	f := smallFixture(t)
	eng := &g2OffloadingCPU{}
	var phases []string
	opts := ProveOptions{
		Engine: eng,
		Phase: func(name string, run func() error) error {
			phases = append(phases, name)
			return run()
		},
		Beside: func(name string, run func()) {
			t.Errorf("Beside(%s) called: a G2-offloading engine runs msm_b2 in its turn", name)
			run()
		},
	}
	proof, st, err := Prove(context.Background(), f.pk, f.cs, randScalar(t), randScalar(t), opts)
	if err != nil {
		t.Fatalf("Prove: %v", err)
	}
	if err := Verify(f.vk, proof, publicInputs(f.cs)); err != nil {
		t.Fatalf("Verify(proof with G2 offloaded) = %v, want nil", err)
	}
	if len(eng.g2Lens) != 1 || eng.g2Lens[0] != len(f.pk.B2) {
		t.Errorf("G2 MSM lengths %v, want one of the whole B query (%d points)", eng.g2Lens, len(f.pk.B2))
	}
	want := "ntt msm_a msm_b1 msm_b2 msm_l msm_h assemble"
	if got := strings.Join(phases, " "); got != want {
		t.Errorf("phases %q, want %q (msm_b2 in its turn, no wait)", got, want)
	}
	if len(eng.kept2) != 1 || len(eng.kept2[0]) != len(f.pk.B2) || &eng.kept2[0][0] != &f.pk.B2[0] {
		t.Errorf("KeepG2 got %d calls, want one with the proving key's B query (%d points)", len(eng.kept2), len(f.pk.B2))
	}
	if st.B2.MultiExp != st.B2.Points || st.B2.Zeros+st.B2.Ones+st.B2.Infinity != 0 {
		t.Errorf("B2 stats %+v: want every point in the MultiExp", st.B2)
	}
}

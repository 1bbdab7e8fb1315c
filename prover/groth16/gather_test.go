package groth16

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
)

// gatherNaive is gather one element at a time, in order: the reference.
func gatherNaive(density []bool, inputs, aux []fr.Element) []fr.Element {
	var out []fr.Element
	for j, in := range density {
		if !in {
			continue
		}
		if j < len(inputs) {
			out = append(out, inputs[j])
		} else {
			out = append(out, aux[j-len(inputs)])
		}
	}
	return out
}

// gatherFixture returns a witness of ni inputs and na aux values (each
// element distinct) and a density holding each variable with probability
// p.
func gatherFixture(rng *rand.Rand, ni, na int, p float64) (density []bool, inputs, aux []fr.Element) {
	inputs, aux = make([]fr.Element, ni), make([]fr.Element, na)
	for i := range inputs {
		inputs[i].SetUint64(uint64(i) + 1)
	}
	for i := range aux {
		aux[i].SetUint64(uint64(i) + 1<<40)
	}
	density = make([]bool, ni+na)
	for i := range density {
		density[i] = rng.Float64() < p
	}
	return density, inputs, aux
}

func TestGatherTakesTheDenseVariablesInOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(20, 26))
	for _, tc := range []struct {
		ni, na int
		p      float64
	}{
		{1, 0, 1}, {1, 0, 0}, {3, 5, 0.5}, {5, 1000, 0.9}, {2, 1 << 16, 0.5}, {7, 1<<17 + 13, 0.99},
		{4, 1<<18 + 1, 0.3}, {1, 1 << 18, 0}, {9, 1 << 18, 1},
	} {
		density, inputs, aux := gatherFixture(rng, tc.ni, tc.na, tc.p)
		want := gatherNaive(density, inputs, aux)
		got := gather(nil, density, inputs, aux)
		if len(got) != len(want) {
			t.Fatalf("%d inputs, %d aux, density %.2f: %d gathered, want %d", tc.ni, tc.na, tc.p, len(got), len(want))
		}
		for k := range want {
			if got[k] != want[k] {
				t.Fatalf("%d inputs, %d aux, density %.2f: element %d is %s, want %s", tc.ni, tc.na, tc.p, k, got[k].String(), want[k].String())
			}
		}
	}
}

// BenchmarkGather times gathering a query's scalars from the witness, as
// msm_a and msm_b1 do each proof (at 2^24 on the H100 their host parts
// were ~180 ms each).
func BenchmarkGather(b *testing.B) {
	for _, logN := range []int{20, 22} {
		density, inputs, aux := gatherFixture(rand.New(rand.NewPCG(1, 2)), 5, 1<<logN, 0.95)
		want := len(gatherNaive(density, inputs, aux))
		b.Run(fmt.Sprintf("variables=2^%d", logN), func(b *testing.B) {
			b.SetBytes(int64(want) * fr.Bytes)
			for b.Loop() {
				gather(nil, density, inputs, aux)
			}
		})
	}
}

// BenchmarkGatherReused gathers into the buffer of the proof before, as
// Prove does with a Scratch.
func BenchmarkGatherReused(b *testing.B) {
	density, inputs, aux := gatherFixture(rand.New(rand.NewPCG(1, 2)), 5, 1<<22, 0.95)
	buf := gather(nil, density, inputs, aux)
	b.SetBytes(int64(len(buf)) * fr.Bytes)
	for b.Loop() {
		buf = gather(buf, density, inputs, aux)
	}
}

func TestGatherReusesABufferWithRoom(t *testing.T) {
	density, inputs, aux := gatherFixture(rand.New(rand.NewPCG(3, 4)), 3, 1<<17, 0.7)
	want := gatherNaive(density, inputs, aux)
	buf := make([]fr.Element, 5, len(want)+10)
	got := gather(buf, density, inputs, aux)
	if &got[0] != &buf[0] || len(got) != len(want) {
		t.Fatalf("gather into a buffer of room %d: got %d elements at a new address %v; want %d in the buffer", cap(buf), len(got), &got[0] != &buf[0], len(want))
	}
	small := make([]fr.Element, 0, len(want)-1)
	if got2 := gather(small, density, inputs, aux); len(got2) != len(want) || cap(small) > 0 && &got2[0] == &small[:1][0] {
		t.Fatalf("gather into a buffer one short: %d elements, want %d in a new slice", len(got2), len(want))
	}
	for k := range want {
		if got[k] != want[k] {
			t.Fatalf("element %d is %s, want %s", k, got[k].String(), want[k].String())
		}
	}
}

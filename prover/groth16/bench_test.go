package groth16

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	mrand "math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"

	"github.com/perfbot/perfbot/prover/r1cs"
)

// Benchmark sizes: 2^12..2^18. With -short only up to 2^14; pick sizes
// with -bench, e.g. -bench 'MSMG1.*/points=65536$'.
func benchSizes(b *testing.B, from, to int) []int {
	var sizes []int
	for k := from; k <= to; k++ {
		if testing.Short() && k > 14 {
			break
		}
		sizes = append(sizes, 1<<k)
	}
	return sizes
}

// benchScalars returns n scalars: dist "bits" is a SHA-256-like assignment
// (50% zeros, 49% ones, 1% uniform), "random" is uniform.
func benchScalars(b *testing.B, dist string, n int) []fr.Element {
	rng := mrand.New(mrand.NewPCG(uint64(n), 99))
	s := make([]fr.Element, n)
	for i := range s {
		u := rng.IntN(100)
		switch {
		case dist == "bits" && u < 50:
		case dist == "bits" && u < 99:
			s[i].SetOne()
		default:
			var buf [32]byte
			for k := 0; k < 32; k += 8 {
				binary.LittleEndian.PutUint64(buf[k:], rng.Uint64())
			}
			s[i].SetBytes(buf[:]) // reduced mod r
		}
	}
	return s
}

func BenchmarkMSMG1(b *testing.B)          { benchMSMG1(b, false) }
func BenchmarkMSMG1Reference(b *testing.B) { benchMSMG1(b, true) }

// benchMSMG1: ours (zero/one split, then MultiExp) or the reference (plain
// gnark-crypto MultiExp) on the same points and scalars.
func benchMSMG1(b *testing.B, reference bool) {
	for _, dist := range []string{"bits", "random"} {
		for _, n := range benchSizes(b, 12, 18) {
			b.Run(fmt.Sprintf("dist=%s/points=%d", dist, n), func(b *testing.B) {
				points, err := randomPointsG1(rand.Reader, n)
				if err != nil {
					b.Fatal(err)
				}
				scalars := benchScalars(b, dist, n)
				for b.Loop() {
					if reference {
						var p bls12381.G1Jac
						if _, err := p.MultiExp(points, scalars, ecConfig); err != nil {
							b.Fatal(err)
						}
					} else if _, _, err := msmG1(CPU{}, points, scalars, false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkMSMG2(b *testing.B)          { benchMSMG2(b, false) }
func BenchmarkMSMG2Reference(b *testing.B) { benchMSMG2(b, true) }

func benchMSMG2(b *testing.B, reference bool) {
	for _, dist := range []string{"bits", "random"} {
		for _, n := range benchSizes(b, 12, 16) {
			b.Run(fmt.Sprintf("dist=%s/points=%d", dist, n), func(b *testing.B) {
				points, err := randomPointsG2(rand.Reader, n)
				if err != nil {
					b.Fatal(err)
				}
				scalars := benchScalars(b, dist, n)
				for b.Loop() {
					if reference {
						var p bls12381.G2Jac
						if _, err := p.MultiExp(points, scalars, ecConfig); err != nil {
							b.Fatal(err)
						}
					} else if _, _, err := msmG2(CPU{}, points, scalars, false); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkNTT times the whole H computation (three inverse FFTs, three
// coset FFTs, the pointwise step and one inverse coset FFT) on CPU.
func BenchmarkNTT(b *testing.B) {
	for _, n := range benchSizes(b, 12, 18) {
		b.Run(fmt.Sprintf("size=%d", n), func(b *testing.B) {
			src := [3][]fr.Element{benchScalars(b, "random", n), benchScalars(b, "random", n), benchScalars(b, "random", n)}
			var work [3][]fr.Element
			for i := range work {
				work[i] = make([]fr.Element, n)
			}
			for b.Loop() {
				b.StopTimer()
				for i := range work {
					copy(work[i], src[i])
				}
				b.StartTimer()
				if err := (CPU{}).QuotientH(work[0], work[1], work[2]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkProve proves the scaled test circuit (SHA-256-like: almost all
// aux values bits) with random keys; constraints=N counts the input rows
// too, so N is also the domain size. Each phase's time per proof is
// reported as <phase>-ns/op.
func BenchmarkProve(b *testing.B)          { benchProve(b, false) }
func BenchmarkProveReference(b *testing.B) { benchProve(b, true) }

// benchProve with reference set hands every MSM whole to MultiExp.
func benchProve(b *testing.B, reference bool) {
	for _, n := range benchSizes(b, 12, 18) {
		b.Run(fmt.Sprintf("constraints=%d", n), func(b *testing.B) {
			cs := buildCircuit(r1cs.Prove|r1cs.Setup, 5, 6, scaled(n))
			if DomainSize(cs) != n {
				b.Fatalf("scaled circuit has domain %d, want %d", DomainSize(cs), n)
			}
			pk, _, err := RandomKeys(cs, rand.Reader)
			if err != nil {
				b.Fatal(err)
			}
			times := map[string]time.Duration{}
			opts := ProveOptions{
				plainMSM: reference,
				Phase: func(name string, run func() error) error {
					t0 := time.Now()
					err := run()
					times[name] += time.Since(t0)
					return err
				},
			}
			r, s := randScalar(b), randScalar(b)
			runs := 0
			for b.Loop() {
				if _, _, err := Prove(context.Background(), pk, cs, r, s, opts); err != nil {
					b.Fatal(err)
				}
				runs++
			}
			for _, name := range Phases {
				b.ReportMetric(float64(times[name].Nanoseconds())/float64(runs), name+"-ns/op")
			}
		})
	}
}

// BenchmarkSetup times a real setup of the scaled test circuit.
func BenchmarkSetup(b *testing.B) {
	for _, n := range benchSizes(b, 12, 18) {
		b.Run(fmt.Sprintf("constraints=%d", n), func(b *testing.B) {
			cs := buildCircuit(r1cs.Setup, 5, 6, scaled(n))
			for b.Loop() {
				if _, _, err := Setup(cs, rand.Reader); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkRandomKeys times RandomKeys on the scaled test circuit.
func BenchmarkRandomKeys(b *testing.B) {
	for _, n := range benchSizes(b, 12, 18) {
		b.Run(fmt.Sprintf("constraints=%d", n), func(b *testing.B) {
			cs := buildCircuit(r1cs.Setup, 5, 6, scaled(n))
			for b.Loop() {
				if _, _, err := RandomKeys(cs, rand.Reader); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkFixedBaseG1 is Setup's fixed-base multiplication; the reference
// is gnark-crypto's BatchScalarMultiplicationG1 on the same scalars.
func BenchmarkFixedBaseG1(b *testing.B)          { benchFixedBaseG1(b, false) }
func BenchmarkFixedBaseG1Reference(b *testing.B) { benchFixedBaseG1(b, true) }

func benchFixedBaseG1(b *testing.B, reference bool) {
	_, _, g1, _ := bls12381.Generators()
	for _, n := range benchSizes(b, 12, 16) {
		b.Run(fmt.Sprintf("points=%d", n), func(b *testing.B) {
			scalars := benchScalars(b, "random", n)
			for b.Loop() {
				if reference {
					bls12381.BatchScalarMultiplicationG1(&g1, scalars)
				} else {
					fixedBaseG1(&g1, scalars)
				}
			}
		})
	}
}

// BenchmarkReadKeys reads a key file of the scaled test circuit (random
// keys, the same size as real ones) from memory.
func BenchmarkReadKeys(b *testing.B) {
	for _, n := range benchSizes(b, 12, 18) {
		b.Run(fmt.Sprintf("constraints=%d", n), func(b *testing.B) {
			cs := buildCircuit(r1cs.Setup, 5, 6, scaled(n))
			pk, vk, err := RandomKeys(cs, rand.Reader)
			if err != nil {
				b.Fatal(err)
			}
			var buf bytes.Buffer
			if err := WriteKeys(&buf, pk, vk); err != nil {
				b.Fatal(err)
			}
			b.SetBytes(int64(buf.Len()))
			for b.Loop() {
				if _, _, err := ReadKeys(bytes.NewReader(buf.Bytes()), pk.Shape); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkSumG1 is the scalar-one sum (batched affine additions); the
// reference adds the same points with mixed Jacobian additions, one chain
// per core.
func BenchmarkSumG1(b *testing.B)          { benchSumG1(b, false) }
func BenchmarkSumG1Reference(b *testing.B) { benchSumG1(b, true) }

func benchSumG1(b *testing.B, reference bool) {
	for _, n := range benchSizes(b, 12, 17) {
		b.Run(fmt.Sprintf("points=%d", n), func(b *testing.B) {
			points, err := randomPointsG1(rand.Reader, n)
			if err != nil {
				b.Fatal(err)
			}
			idx := make([]int32, n)
			for i := range idx {
				idx[i] = int32(i)
			}
			for b.Loop() {
				if reference {
					sumJacobianG1(points)
				} else {
					sumG1(points, idx)
				}
			}
		})
	}
}

func sumJacobianG1(points []bls12381.G1Affine) bls12381.G1Jac {
	workers := runtime.GOMAXPROCS(0)
	sums := make([]bls12381.G1Jac, workers)
	var wg sync.WaitGroup
	for w := range sums {
		wg.Go(func() {
			s := &sums[w]
			s.X.SetOne()
			s.Y.SetOne()
			for i := w * len(points) / workers; i < (w+1)*len(points)/workers; i++ {
				s.AddMixed(&points[i])
			}
		})
	}
	wg.Wait()
	for w := 1; w < workers; w++ {
		sums[0].AddAssign(&sums[w])
	}
	return sums[0]
}

package gpu_test

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/consensys/gnark-crypto/ecc"
	bls12381 "github.com/consensys/gnark-crypto/ecc/bls12-381"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr"
	"github.com/consensys/gnark-crypto/ecc/bls12-381/fr/fft"
	"github.com/consensys/gnark-crypto/utils"

	"github.com/perfbot/perfbot/prover"
	"github.com/perfbot/perfbot/prover/gpu"
	"github.com/perfbot/perfbot/prover/groth16"
)

// These tests run on the CPU path everywhere: a missing or broken library
// must be reported, never crash or be skipped silently.

func TestOpenMissingLibrarySaysWhereItLookedAndHowToBuild(t *testing.T) {
	_, err := gpu.Open("/nonexistent/dir/libperfbot_cuda.so")
	if !errors.Is(err, gpu.ErrNoLibrary) {
		t.Fatalf("Open(missing) = %v; want ErrNoLibrary", err)
	}
	for _, want := range []string{"/nonexistent/dir/libperfbot_cuda.so", "make cuda"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q does not mention %q", err, want)
		}
	}
}

func TestOpenRefusesAFileThatIsNotALibrary(t *testing.T) {
	if !gpu.Available {
		t.Skip("built without cgo: nothing is dlopened")
	}
	p := filepath.Join(t.TempDir(), "libperfbot_cuda.so")
	if err := os.WriteFile(p, []byte("not an ELF file\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := gpu.Open(p)
	if err == nil || errors.Is(err, gpu.ErrNoLibrary) || !strings.Contains(err.Error(), "load "+p) {
		t.Fatalf("Open(garbage) = %v; want a load error naming the file", err)
	}
}

func TestCandidatesOrder(t *testing.T) {
	t.Setenv(gpu.EnvLib, "/from/env/libperfbot_cuda.so")
	if got := gpu.Candidates("/explicit.so"); len(got) != 1 || got[0] != "/explicit.so" {
		t.Errorf("explicit: %v", got)
	}
	got := gpu.Candidates("")
	exe, _ := os.Executable()
	want := []string{"/from/env/libperfbot_cuda.so", filepath.Join(filepath.Dir(exe), gpu.LibName)}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("Candidates = %v; want %v", got, want)
	}
}

// From here on the tests need the library and a device: on the GPU
// machine, `make cuda` and PERFBOT_CUDA_LIB=build/libperfbot_cuda.so.

var (
	engOnce sync.Once
	eng     *gpu.Engine
	engErr  error
)

func engine(t testing.TB) *gpu.Engine {
	t.Helper()
	engOnce.Do(func() {
		var lib *gpu.Library
		lib, engErr = gpu.Open("")
		if engErr == nil {
			eng, engErr = lib.NewEngine(0)
		}
	})
	switch {
	case errors.Is(engErr, gpu.ErrNoLibrary), errors.Is(engErr, gpu.ErrNoDevice):
		t.Skipf("GPU test skipped: %v (run it on the GPU machine after make cuda)", engErr)
	case engErr != nil:
		t.Fatalf("the CUDA library is there but does not work: %v", engErr)
	}
	return eng
}

// library opens the CUDA library for a test that makes engines of its
// own (with an environment of its own); it skips where there is none.
func library(t testing.TB) *gpu.Library {
	t.Helper()
	lib, err := gpu.Open("")
	if errors.Is(err, gpu.ErrNoLibrary) {
		t.Skipf("GPU test skipped: %v (run it on the GPU machine after make cuda)", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return lib
}

func randomScalars(t testing.TB, n int) []fr.Element {
	s := make([]fr.Element, n)
	for i := range s {
		if _, err := s[i].SetRandom(); err != nil {
			t.Fatal(err)
		}
	}
	return s
}

// randomPoints returns n points k_i·G for fresh random k_i.
func randomPoints(t testing.TB, n int) []bls12381.G1Affine {
	_, _, g, _ := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG1(&g, randomScalars(t, n))
}

func refMSM(t testing.TB, p []bls12381.G1Affine, s []fr.Element) bls12381.G1Jac {
	var r bls12381.G1Jac
	if _, err := r.MultiExp(p, s, ecc.MultiExpConfig{}); err != nil {
		t.Fatal(err)
	}
	return r
}

// naiveMSM is Σ s_i·P_i one scalar multiplication at a time: slow and
// obviously right, for the edge cases.
func naiveMSM(p []bls12381.G1Affine, s []fr.Element) bls12381.G1Jac {
	var acc bls12381.G1Jac
	acc.X.SetOne()
	acc.Y.SetOne()
	for i := range p {
		var k big.Int
		s[i].BigInt(&k)
		var q bls12381.G1Jac
		q.FromAffine(&p[i])
		q.ScalarMultiplication(&q, &k)
		acc.AddAssign(&q)
	}
	return acc
}

func TestMSMEqualsGnarkCryptoOnFreshRandomInputs(t *testing.T) {
	e := engine(t)
	for _, n := range []int{1, 2, 3, 100, 1 << 10, 1 << 16, 1 << 20} {
		p, s := randomPoints(t, n), randomScalars(t, n)
		got, err := e.MultiExpG1(p, s)
		if err != nil {
			t.Fatalf("n=%d: %v", n, err)
		}
		want := refMSM(t, p, s)
		if !got.Equal(&want) {
			t.Errorf("n=%d: GPU MSM differs from gnark-crypto MultiExp", n)
		}
	}
}

func TestMSMEdgeCases(t *testing.T) {
	e := engine(t)
	const n = 1000
	p := randomPoints(t, n)
	var rMinus1 fr.Element
	rMinus1.SetOne()
	rMinus1.Neg(&rMinus1)
	fill := func(v fr.Element) []fr.Element {
		s := make([]fr.Element, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	k := randomScalars(t, 1)[0]
	var one fr.Element
	one.SetOne()
	repeated := make([]bls12381.G1Affine, n)
	for i := range repeated {
		repeated[i] = p[i%5]
	}
	withInf := append([]bls12381.G1Affine(nil), p...)
	for i := 0; i < n; i += 7 {
		withInf[i] = bls12381.G1Affine{} // (0, 0): infinity
	}
	someZero := randomScalars(t, n)
	for i := 0; i < n; i += 3 {
		someZero[i].SetZero()
	}
	cases := []struct {
		name string
		p    []bls12381.G1Affine
		s    []fr.Element
	}{
		{"zero scalars", p, fill(fr.Element{})},
		{"scalar r-1", p, fill(rMinus1)},
		{"all scalars equal", p, fill(k)},
		{"all scalars one", p, fill(one)},
		{"a third of the scalars zero", p, someZero},
		{"repeated points", repeated, randomScalars(t, n)},
		{"points at infinity", withInf, randomScalars(t, n)},
	}
	for _, tc := range cases {
		got, err := e.MultiExpG1(tc.p, tc.s)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := naiveMSM(tc.p, tc.s)
		if !got.Equal(&want) {
			t.Errorf("%s: GPU MSM differs from Σ s_i·P_i", tc.name)
		}
	}
	if _, err := e.MultiExpG1(p[:3], randomScalars(t, 2)); err == nil {
		t.Error("3 points and 2 scalars: no error")
	}
}

// randomPointsG2 returns n points k_i·G2 for fresh random k_i.
func randomPointsG2(t testing.TB, n int) []bls12381.G2Affine {
	_, _, _, g := bls12381.Generators()
	return bls12381.BatchScalarMultiplicationG2(&g, randomScalars(t, n))
}

func refMSMG2(t testing.TB, p []bls12381.G2Affine, s []fr.Element) bls12381.G2Jac {
	var r bls12381.G2Jac
	if _, err := r.MultiExp(p, s, ecc.MultiExpConfig{}); err != nil {
		t.Fatal(err)
	}
	return r
}

func TestMSMG2EqualsGnarkCryptoOnFreshRandomInputs(t *testing.T) {
	e := engine(t)
	for _, n := range []int{1, 2, 3, 1 << 4, 100, 1 << 10, 1 << 12, 1 << 16} {
		p, s := randomPointsG2(t, n), randomScalars(t, n)
		want := refMSMG2(t, p, s)
		for _, c := range []int{0, 7} { // the default window, and a small one
			got, err := e.MultiExpG2Device(p, s, c)
			if err != nil {
				t.Fatalf("n=%d window %d: %v", n, c, err)
			}
			if !got.Equal(&want) {
				t.Errorf("n=%d window %d: GPU G2 MSM differs from gnark-crypto MultiExp", n, c)
			}
		}
	}
}

func TestMSMG2EdgeCases(t *testing.T) {
	e := engine(t)
	const n = 1000
	p := randomPointsG2(t, n)
	var rMinus1, one fr.Element
	rMinus1.SetOne()
	rMinus1.Neg(&rMinus1)
	one.SetOne()
	fill := func(v fr.Element) []fr.Element {
		s := make([]fr.Element, n)
		for i := range s {
			s[i] = v
		}
		return s
	}
	k := randomScalars(t, 1)[0]
	repeated := make([]bls12381.G2Affine, n)
	for i := range repeated {
		repeated[i] = p[i%5] // P + P in a bucket: the doubling branch
	}
	withInf := append([]bls12381.G2Affine(nil), p...)
	for i := 0; i < n; i += 7 {
		withInf[i] = bls12381.G2Affine{} // (0, 0): infinity
	}
	someZero := randomScalars(t, n)
	for i := 0; i < n; i += 3 {
		someZero[i].SetZero()
	}
	// P and −P with one scalar: same bucket, opposite points, they cancel.
	cancel := make([]bls12381.G2Affine, 0, n)
	for i := 0; i < n/2; i++ {
		var q bls12381.G2Affine
		q.Neg(&p[i])
		cancel = append(cancel, p[i], q)
	}
	// Half cancel, half survive: the sum is not infinity.
	halfCancel := append(append([]bls12381.G2Affine(nil), cancel[:n/2]...), p[n/2:]...)
	cases := []struct {
		name string
		p    []bls12381.G2Affine
		s    []fr.Element
	}{
		{"zero scalars", p, fill(fr.Element{})},
		{"scalar r-1", p, fill(rMinus1)},
		{"all scalars equal", p, fill(k)},
		{"all scalars one", p, fill(one)},
		{"a third of the scalars zero", p, someZero},
		{"repeated points", repeated, randomScalars(t, n)},
		{"repeated points, one scalar", repeated, fill(k)},
		{"points at infinity", withInf, randomScalars(t, n)},
		{"P and -P cancel", cancel, fill(k)},
		{"P and -P cancel in half", halfCancel, fill(k)},
	}
	for _, tc := range cases {
		want := refMSMG2(t, tc.p, tc.s)
		for _, c := range []int{0, 7} {
			got, err := e.MultiExpG2Device(tc.p, tc.s, c)
			if err != nil {
				t.Fatalf("%s, window %d: %v", tc.name, c, err)
			}
			if !got.Equal(&want) {
				t.Errorf("%s, window %d: GPU G2 MSM differs from gnark-crypto MultiExp", tc.name, c)
			}
		}
	}
	if _, err := e.MultiExpG2Device(p[:3], randomScalars(t, 2), 0); err == nil {
		t.Error("3 points and 2 scalars: no error")
	}
	if _, err := e.MultiExpG2Device(p[:3], randomScalars(t, 3), 21); err == nil || !strings.Contains(err.Error(), "window_bits 21") {
		t.Errorf("window 21: %v; want the library's range error", err)
	}
}

// TestG2RunsWhereItIsTold: PERFBOT_G2 (and SetG2OnDevice) choose where
// MultiExpG2 runs, the device by default; both give gnark-crypto's sum, and only
// the device leaves g2_ steps; a bad value is refused with a message.
func TestG2RunsWhereItIsTold(t *testing.T) {
	lib := library(t)
	const n = 1 << 10
	p, s := randomPointsG2(t, n), randomScalars(t, n)
	want := refMSMG2(t, p, s)
	for _, tc := range []struct {
		env    string
		device bool
	}{{"", true}, {"host", false}, {"gpu", true}} {
		t.Run("PERFBOT_G2="+tc.env, func(t *testing.T) {
			t.Setenv(gpu.EnvG2, tc.env)
			e, err := lib.NewEngine(0)
			if errors.Is(err, gpu.ErrNoDevice) {
				t.Skipf("GPU test skipped: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			if e.G2OnDevice() != tc.device || e.OffloadsG2() != tc.device {
				t.Fatalf("G2OnDevice() = %v, OffloadsG2() = %v; want %v", e.G2OnDevice(), e.OffloadsG2(), tc.device)
			}
			for _, on := range []bool{tc.device, !tc.device} {
				e.SetG2OnDevice(on)
				got, err := e.MultiExpG2(p, s)
				if err != nil {
					t.Fatal(err)
				}
				if !got.Equal(&want) {
					t.Errorf("on device %v: MultiExpG2 differs from gnark-crypto", on)
				}
				if names := stepNames(e); names["g2_accumulate"] != on || names["accumulate"] {
					t.Errorf("on device %v: steps %v; want g2_accumulate only on the device, and no G1 steps", on, names)
				}
			}
		})
	}
	t.Setenv(gpu.EnvG2, "fpga")
	if _, err := lib.NewEngine(0); err == nil || !strings.Contains(err.Error(), "PERFBOT_G2=fpga") {
		t.Errorf("PERFBOT_G2=fpga: %v; want an error naming it", err)
	}
}

// TestKeptG2Points: KeepG2 keeps G2 points on the device for MultiExpG2
// on them and on their parts; kept or not, the sums are gnark-crypto's.
func TestKeptG2Points(t *testing.T) {
	lib := library(t)
	t.Setenv(gpu.EnvG2, "gpu")
	e, err := lib.NewEngine(0)
	if errors.Is(err, gpu.ErrNoDevice) {
		t.Skipf("GPU test skipped: %v", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	const n = 1 << 12
	p, s := randomPointsG2(t, n), randomScalars(t, n)
	e.KeepG2(p)
	if got := e.KeptG2(); got != n {
		t.Fatalf("KeptG2() = %d after KeepG2 of %d points", got, n)
	}
	stepNames(e)
	for _, r := range []struct{ lo, hi int }{{0, n}, {0, 1}, {123, 123 + 1000}, {n - 7, n}} {
		got, err := e.MultiExpG2(p[r.lo:r.hi], s[r.lo:r.hi])
		if err != nil {
			t.Fatalf("points [%d, %d): %v", r.lo, r.hi, err)
		}
		if want := refMSMG2(t, p[r.lo:r.hi], s[r.lo:r.hi]); !got.Equal(&want) {
			t.Errorf("points [%d, %d): GPU G2 MSM differs from gnark-crypto MultiExp", r.lo, r.hi)
		}
		if names := stepNames(e); names["g2_upload_points"] || !names["g2_accumulate"] {
			t.Errorf("points [%d, %d): steps %v; want g2_accumulate and no g2_upload_points", r.lo, r.hi, names)
		}
	}
}

// stepNames returns the names of the engine's steps since the last call.
func stepNames(e *gpu.Engine) map[string]bool {
	names := map[string]bool{}
	for _, st := range e.TakeSteps() {
		names[st.Name] = true
	}
	return names
}

// TestKeptPoints: points kept on the device serve MSMs on them and on any
// part of them without being copied again, and give the same sums as
// gnark-crypto; points not kept are copied for the call.
func TestKeptPoints(t *testing.T) {
	lib := library(t)
	for _, keep := range []string{"", "off"} {
		t.Run("PERFBOT_GPU_KEEP_POINTS="+keep, func(t *testing.T) {
			t.Setenv("PERFBOT_GPU_KEEP_POINTS", keep)
			e, err := lib.NewEngine(0)
			if errors.Is(err, gpu.ErrNoDevice) {
				t.Skipf("GPU test skipped: %v", err)
			}
			if err != nil {
				t.Fatal(err)
			}
			defer e.Close()
			const n = 1 << 16
			p, s := randomPoints(t, n), randomScalars(t, n)
			e.KeepG1(p)
			wantKept := n
			if keep == "off" {
				wantKept = 0
			}
			if got := e.Kept(); got != wantKept {
				t.Fatalf("Kept() = %d after KeepG1 of %d points; want %d", got, n, wantKept)
			}
			if names := stepNames(e); names["upload_points"] != (keep == "") {
				t.Errorf("KeepG1's steps %v: upload_points there = %v, want %v", names, names["upload_points"], keep == "")
			}
			e.KeepG1(p[10:20]) // a part of a kept slice: nothing new
			if got := e.Kept(); got != wantKept {
				t.Errorf("Kept() = %d after keeping a part again; want %d", got, wantKept)
			}
			for _, r := range []struct{ lo, hi int }{{0, n}, {0, 1}, {12345, 12345 + 1000}, {n - 7, n}} {
				got, err := e.MultiExpG1(p[r.lo:r.hi], s[r.lo:r.hi])
				if err != nil {
					t.Fatalf("points [%d, %d): %v", r.lo, r.hi, err)
				}
				if want := refMSM(t, p[r.lo:r.hi], s[r.lo:r.hi]); !got.Equal(&want) {
					t.Errorf("points [%d, %d): GPU MSM differs from gnark-crypto MultiExp", r.lo, r.hi)
				}
				if names := stepNames(e); names["upload_points"] == (keep == "") || !names["accumulate"] {
					t.Errorf("points [%d, %d): steps %v; want accumulate, and upload_points only when not kept", r.lo, r.hi, names)
				}
			}
			// A copy is other memory: uploaded for the call.
			q := append([]bls12381.G1Affine(nil), p[:100]...)
			got, err := e.MultiExpG1(q, s[:100])
			if err != nil {
				t.Fatal(err)
			}
			if want := refMSM(t, q, s[:100]); !got.Equal(&want) {
				t.Error("a copy of kept points: GPU MSM differs from gnark-crypto MultiExp")
			}
			if names := stepNames(e); !names["upload_points"] {
				t.Errorf("an MSM on points not kept: steps %v; want upload_points", names)
			}
		})
	}
}

// gnarkNTT is the reference: gnark-crypto's FFT, put in natural order.
func gnarkNTT(v []fr.Element, inverse, coset bool) {
	d := fft.NewDomain(uint64(len(v)))
	var opts []fft.Option
	if coset {
		opts = append(opts, fft.OnCoset())
	}
	if inverse {
		d.FFTInverse(v, fft.DIF, opts...)
	} else {
		d.FFT(v, fft.DIF, opts...)
	}
	utils.BitReverse(v)
}

func TestNTTEqualsGnarkCryptoFFT(t *testing.T) {
	e := engine(t)
	sizes := []int{1, 2, 3, 4, 5, 7, 8, 10, 11, 12, 13, 16, 18, 20, 22, 24}
	if testing.Short() {
		sizes = sizes[:11]
	}
	for _, logN := range sizes {
		x := randomScalars(t, 1<<logN)
		for _, mode := range []struct {
			name           string
			inverse, coset bool
		}{{"forward", false, false}, {"inverse", true, false}, {"coset forward", false, true}, {"coset inverse", true, true}} {
			want := append([]fr.Element(nil), x...)
			gnarkNTT(want, mode.inverse, mode.coset)
			got := append([]fr.Element(nil), x...)
			if err := e.NTT(got, mode.inverse, mode.coset); err != nil {
				t.Fatalf("2^%d %s: %v", logN, mode.name, err)
			}
			if !equal(got, want) {
				t.Errorf("2^%d %s: GPU differs from gnark-crypto fft", logN, mode.name)
			}
		}
	}
}

func equal(a, b []fr.Element) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestQuotientEqualsCPUEngine(t *testing.T) {
	e := engine(t)
	for _, logN := range []int{1, 10, 16, 20} {
		n := 1 << logN
		a, b, c := randomScalars(t, n), randomScalars(t, n), randomScalars(t, n)
		want := append([]fr.Element(nil), a...)
		if err := (groth16.CPU{}).QuotientH(want, append([]fr.Element(nil), b...), append([]fr.Element(nil), c...)); err != nil {
			t.Fatal(err)
		}
		bc, cc := append([]fr.Element(nil), b...), append([]fr.Element(nil), c...)
		if err := e.QuotientH(a, b, c); err != nil {
			t.Fatalf("2^%d: %v", logN, err)
		}
		if !equal(a, want) {
			t.Errorf("2^%d: GPU quotient differs from the CPU engine", logN)
		}
		if !equal(b, bc) || !equal(c, cc) {
			t.Errorf("2^%d: the GPU quotient changed b or c", logN)
		}
	}
}

// collect is a prover.Sink that keeps what it is given.
type collect struct {
	info   prover.Info
	proofs []prover.ProofResult
}

func (c *collect) Start(i prover.Info) error        { c.info = i; return nil }
func (c *collect) Proof(p prover.ProofResult) error { c.proofs = append(c.proofs, p); return nil }

func TestGPUProofsVerify(t *testing.T) {
	engine(t) // skips without a GPU
	var sink collect
	cfg := prover.Config{
		Circuit: "sha256", Constraints: 1 << 16, Backend: "gpu", Phases: "all", SRS: "setup",
		Count: 2, Verify: true, Seed: int64(randomScalars(t, 1)[0][0]), KeyDir: t.TempDir(),
	}
	if err := prover.Run(context.Background(), cfg, &sink); err != nil {
		t.Fatalf("GPU proof: %v", err)
	}
	if sink.info.Backend != "gpu" || sink.info.GPU == "" {
		t.Errorf("info: backend %q, gpu %q; want gpu and a device name", sink.info.Backend, sink.info.GPU)
	}
	units := map[string]bool{}
	for _, m := range sink.proofs[0].Measurements {
		for _, x := range m.Metrics {
			units[m.Phase+" "+x.Unit] = true
		}
	}
	for _, want := range []string{"msm_h accumulate-sec/op", "msm_h sort-sec/op", "ntt to_coset-sec/op", "msm_h upload_points-sec/op"} {
		if !units[want] {
			t.Errorf("no %q on the phase lines; have %v", want, units)
		}
	}
	// The first proof kept the proving key's G1 queries on the device; the
	// second copied none (and verified: Verify is on).
	if len(sink.proofs) != 2 {
		t.Fatalf("%d proofs, want 2", len(sink.proofs))
	}
	for _, m := range sink.proofs[1].Measurements {
		for _, x := range m.Metrics {
			if x.Unit == "upload_points-sec/op" {
				t.Errorf("second proof: %s %s = %g; want no points copied (kept since the first)", m.Phase, x.Unit, x.Value)
			}
		}
	}
}

// TestGPUProofsVerifyWithG2OnDevice: with PERFBOT_G2=gpu the G2 MSM of
// the B query runs on the device, whole (groth16's msm_b2 hands an
// OffloadsG2 engine every term), and the proofs still verify.
func TestGPUProofsVerifyWithG2OnDevice(t *testing.T) {
	engine(t) // skips without a GPU
	t.Setenv(gpu.EnvG2, "gpu")
	var sink collect
	cfg := prover.Config{
		Circuit: "sha256", Constraints: 1 << 16, Backend: "gpu", Phases: "all", SRS: "setup",
		Count: 2, Verify: true, Seed: int64(randomScalars(t, 1)[0][0]), KeyDir: t.TempDir(),
	}
	if err := prover.Run(context.Background(), cfg, &sink); err != nil {
		t.Fatalf("GPU proof with G2 on the device: %v", err)
	}
	if len(sink.proofs) != 2 {
		t.Fatalf("%d proofs, want 2", len(sink.proofs))
	}
}

// benchInputs returns 2^logN points and scalars for the timing pairs
// below: 2^16 distinct random points from fresh, repeated (random points
// cost the host seconds a million), and distinct scalars.
func benchInputs[P any](b *testing.B, logN int, fresh func(testing.TB, int) []P) ([]P, []fr.Element) {
	n := 1 << logN
	base := fresh(b, min(n, 1<<16))
	p := make([]P, n)
	for i := range p {
		p[i] = base[i%len(base)]
	}
	return p, benchScalars(b, n)
}

// BenchmarkMultiExpG1 times the G1 MSM on the device, with the points
// copied for each call (MultiExpG1 on points not kept) and kept (as a
// proof's queries are); BenchmarkMultiExpG1Reference times gnark-crypto's
// MultiExp on the same inputs on the host's cores. The two in one run
// give BENCHMARKS.md's "× gnark-crypto" ratios:
//
//	PERFBOT_BENCH_MAXLOG=24 go test -run '^$' -bench 'MultiExpG[12]' -benchtime 3x ./prover/gpu
//
// PERFBOT_BENCH_MAXLOG (default 20) is the largest size: 2^20, 2^22, …
func BenchmarkMultiExpG1(b *testing.B) {
	e := engine(b)
	for _, logN := range benchSizes(b) {
		p, s := benchInputs(b, logN, randomPoints)
		b.Run(fmt.Sprintf("points=2^%d/kept=false", logN), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.MultiExpG1(p, s); err != nil {
					b.Fatal(err)
				}
			}
		})
		e.KeepG1(p)
		b.Run(fmt.Sprintf("points=2^%d/kept=true", logN), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.MultiExpG1(p, s); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, st := range e.TakeSteps() {
			b.Logf("2^%d steps (all runs): %s %.1f ms", logN, st.Name, st.Seconds*1e3)
		}
	}
}

func BenchmarkMultiExpG1Reference(b *testing.B) { benchReference(b, randomPoints, refMSM) }

// benchReference times gnark-crypto's MSM (msm) on benchInputs' points
// and scalars at each of benchSizes.
func benchReference[P, R any](b *testing.B, fresh func(testing.TB, int) []P, msm func(testing.TB, []P, []fr.Element) R) {
	for _, logN := range benchSizes(b) {
		p, s := benchInputs(b, logN, fresh)
		b.Run(fmt.Sprintf("points=2^%d", logN), func(b *testing.B) {
			for b.Loop() {
				msm(b, p, s)
			}
		})
	}
}

// benchScalars returns n distinct random scalars: 2^16 fresh ones, then
// each the one 2^16 before times a constant (fresh ones cost the host
// seconds a million).
func benchScalars(b *testing.B, n int) []fr.Element {
	s := randomScalars(b, min(n, 1<<16))
	s = append(s, make([]fr.Element, n-len(s))...)
	var c fr.Element
	c.SetUint64(0x9e3779b97f4a7c15)
	for i := 1 << 16; i < n; i++ {
		s[i].Mul(&s[i-1<<16], &c)
	}
	return s
}

// BenchmarkMultiExpG2 times the G2 MSM on the device (points copied for
// each call, as MultiExpG2 does for points not kept, and kept);
// BenchmarkMultiExpG2Reference times gnark-crypto's on the host's cores;
// sizes as BenchmarkMultiExpG1's.
func BenchmarkMultiExpG2(b *testing.B) {
	e := engine(b)
	for _, logN := range benchSizes(b) {
		p, s := benchInputs(b, logN, randomPointsG2)
		b.Run(fmt.Sprintf("points=2^%d/kept=false", logN), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.MultiExpG2Device(p, s, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		e.SetG2OnDevice(true) // KeepG2 keeps only for the device
		e.KeepG2(p)
		b.Run(fmt.Sprintf("points=2^%d/kept=true", logN), func(b *testing.B) {
			for b.Loop() {
				if _, err := e.MultiExpG2(p, s); err != nil {
					b.Fatal(err)
				}
			}
		})
		for _, st := range e.TakeSteps() {
			b.Logf("2^%d steps (all runs): %s %.1f ms", logN, st.Name, st.Seconds*1e3)
		}
		e.SetG2OnDevice(false)
	}
}

func BenchmarkMultiExpG2Reference(b *testing.B) { benchReference(b, randomPointsG2, refMSMG2) }

// benchSizes reads PERFBOT_BENCH_MAXLOG: 2^20 up to 2^max in steps of 4×.
func benchSizes(b *testing.B) []int {
	max := 20
	if v := os.Getenv("PERFBOT_BENCH_MAXLOG"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 20 || n > 26 {
			b.Fatalf("PERFBOT_BENCH_MAXLOG=%q: want a whole number from 20 to 26", v)
		}
		max = n
	}
	var sizes []int
	for l := 20; l <= max; l += 2 {
		sizes = append(sizes, l)
	}
	return sizes
}

// selftest.cu — build/perfbot_cuda_selftest: checks libperfbot_cuda.so
// through its C ABI on the GPU machine, with references written on the
// host, and times it. The Go tests in prover/gpu check the same library
// against gnark-crypto; this program needs no Go toolchain, which the GPU
// machine lacks.
//
//   perfbot_cuda_selftest check [msm]    correctness, exit 1 on a mismatch
//                                        (msm: the field and the G1 and G2
//                                        MSMs only, no copies or NTTs)
//   perfbot_cuda_selftest bench [MAXLOG] timings, one table row per size,
//                                        each MSM's result checked (exit 1
//                                        on a mismatch)
//   perfbot_cuda_selftest bench-g2 [MAXLOG]  the G2 MSM's timings alone,
//                                        checked likewise
//   perfbot_cuda_selftest once msm|msm2|ntt LOG  one operation, for a profiler
//
// --seed N, anywhere on the line, seeds the random inputs; without it the
// seed is drawn at start. Every mode prints it first, so a failure can be
// rerun on the same inputs. Each section (the field, copies, NTTs, G1 MSM,
// G2 MSM, each bench) draws from a stream of its own derived from the seed,
// so `check msm --seed N` repeats the MSM inputs of `check --seed N`.
//
// The MSM references: ref_affine.h's affine group law with double-and-add,
// which shares no formula with curve.cuh (the device's), for up to
// kAffineTerms terms; above that curve.cuh's XYZZ double-and-add, itself
// checked against the affine law on sampled terms; and, at every size, the
// points' discrete logarithms: the test points are P_i = (a + i·b)·G for
// random a, b known to the host, so Σ s_i·P_i = (Σ s_i·(a + i·b))·G, one
// affine scalar multiplication after O(n) products in Fr.
#include <cuda_runtime.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "curve.cuh"
#include "perfbot_cuda.h"
#include "host_inputs.h"
#include "ref_affine.h"

using namespace pb;
typedef XYZZ<HFp> HX;
typedef Affine<HFp> HA;
typedef XYZZ<HFp2> HX2;
typedef Affine<HFp2> HA2;

typedef ref::Point<HFp> RP;
typedef ref::Point<HFp2> RP2;

static int failures = 0;

// The affine reference costs an inversion an addition (tens of µs), so
// whole MSMs go through it up to this many terms; larger ones are checked
// by discrete logs and, on kSampleTerms sampled terms, against it.
static const size_t kAffineTerms = 128;
static const size_t kSampleTerms = 8;

#define REQUIRE(call)                                                                   \
  do {                                                                                  \
    perfbot_cuda_error e_;                                                              \
    if ((call) != 0) {                                                                  \
      fprintf(stderr, "FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #call, e_.message);  \
      exit(2);                                                                          \
    }                                                                                   \
  } while (0)
#define E &e_

static void expect(bool ok, const std::string &what) {
  printf("%s %s\n", ok ? "ok  " : "FAIL", what.c_str());
  if (!ok) failures++;
}

template <class HF> static XYZZ<HF> mul(const XYZZ<HF> &p, const HFr &s_mont) {
  typedef XYZZ<HF> HX;
  HFr s = s_mont.from_mont();
  HX acc = HX::inf();
  for (int i = 255; i >= 0; i--) {
    acc = acc.dbl();
    if ((s.v[i / 64] >> (i % 64)) & 1) acc = acc.add(p);
  }
  return acc;
}

// P_i = S + i·H on the device, then affine (one inversion per point).
template <class F> __global__ void gen_points(Affine<F> *out, uint64_t n, XYZZ<F> s, XYZZ<F> h) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  XYZZ<F> acc = s;
  XYZZ<F> step = h;
  for (uint64_t k = i; k; k >>= 1) {
    if (k & 1) acc = acc.add(step);
    step = step.dbl();
  }
  out[i] = acc.to_affine();
}

__global__ void fp_mul_kernel(const DFp *a, const DFp *b, DFp *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * b[i] + a[i].sqr() - b[i];
}

static bool on_curve(const HA &p) {
  if (p.is_inf()) return true;
  HFp four = HFp::one().dbl().dbl();
  return p.y.sqr() == p.x.sqr() * p.x + four;
}

// G2: y² = x³ + 4(1 + u).
static bool on_curve(const HA2 &p) {
  if (p.is_inf()) return true;
  HFp four = HFp::one().dbl().dbl();
  return p.y.sqr() == p.x.sqr() * p.x + HFp2{four, four};
}

__global__ void fp2_mul_kernel(const DFp2 *a, const DFp2 *b, DFp2 *c, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) c[i] = a[i] * b[i] + a[i].sqr() - b[i];
}

struct Gpu {
  perfbot_cuda_ctx *ctx = nullptr;
  Gpu() { REQUIRE(perfbot_cuda_open(0, &ctx, E)); }
  ~Gpu() { perfbot_cuda_close(ctx); }
};

// make_points returns n points S + i·H of G1 (DF = DFp) or G2 (DFp2) for
// S = a·G and H = b·G with random a, b, made on the device, and a and b
// (when asked for): the i-th point's discrete logarithm is a + i·b. S and
// H come from the affine reference, so the logs do not rest on curve.cuh.
template <class DF, class HF>
static std::vector<Affine<HF>> make_points_of(uint64_t n, const Affine<HF> &g, HFr *a_out, HFr *b_out) {
  HFr a = rand_fr(), b = rand_fr();
  if (a_out) *a_out = a;
  if (b_out) *b_out = b;
  ref::Point<HF> rg = ref::Point<HF>::from(g);
  XYZZ<HF> s = XYZZ<HF>::from_affine(ref::mul(rg, a).template to_layout<Affine<HF>>()),
           h = XYZZ<HF>::from_affine(ref::mul(rg, b).template to_layout<Affine<HF>>());
  Affine<DF> *d;
  if (cudaMalloc(&d, n * sizeof *d) != cudaSuccess) {
    fprintf(stderr, "make_points: cudaMalloc of %llu points failed\n", (unsigned long long)n);
    exit(2);
  }
  XYZZ<DF> ds, dh;
  static_assert(sizeof ds == sizeof s, "host and device XYZZ agree");
  memcpy(&ds, &s, sizeof ds);
  memcpy(&dh, &h, sizeof dh);
  gen_points<DF><<<(n + 127) / 128, 128>>>(d, n, ds, dh);
  std::vector<Affine<HF>> out(n);
  cudaError_t e = cudaMemcpy(out.data(), d, n * sizeof *d, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    fprintf(stderr, "gen_points: %s\n", cudaGetErrorString(e));
    exit(2);
  }
  cudaFree(d);
  return out;
}
static std::vector<HA> make_points(uint64_t n, HFr *a = nullptr, HFr *b = nullptr) {
  return make_points_of<DFp, HFp>(n, generator(), a, b);
}
static std::vector<HA2> make_points2(uint64_t n, HFr *a = nullptr, HFr *b = nullptr) {
  return make_points_of<DFp2, HFp2>(n, generator2(), a, b);
}

// logs_of returns the discrete logs a + i·b of make_points' first n points.
static std::vector<HFr> logs_of(size_t n, const HFr &a, const HFr &b) {
  std::vector<HFr> l(n);
  HFr x = a;
  for (size_t i = 0; i < n; i++, x = x + b) l[i] = x;
  return l;
}

// dot returns Σ s_i·l_i in Fr.
static HFr dot(const std::vector<HFr> &s, const std::vector<HFr> &l) {
  HFr acc = HFr::zero();
  for (size_t i = 0; i < s.size() && i < l.size(); i++) acc = acc + s[i] * l[i];
  return acc;
}

template <class HF> static XYZZ<HF> msm_ref(const std::vector<Affine<HF>> &p, const std::vector<HFr> &s) {
  XYZZ<HF> acc = XYZZ<HF>::inf();
  for (size_t i = 0; i < p.size(); i++) acc = acc.add(mul(XYZZ<HF>::from_affine(p[i]), s[i]));
  return acc;
}

// msm_want returns the host's Σ s_i·P_i for the checks of the MSM named
// what: the affine reference's (ref_affine.h) up to kAffineTerms terms;
// above, curve.cuh's XYZZ double-and-add (msm_ref), after checking it
// against the affine reference on kSampleTerms terms spread over the input.
// Where the points' discrete logs are given (l_i with P_i = l_i·G), it
// also checks the result is (Σ s_i·l_i)·G, which holds at any size.
template <class HF>
static ref::Point<HF> msm_want(const std::string &what, const Affine<HF> &g, const std::vector<Affine<HF>> &p,
                               const std::vector<HFr> &s, const std::vector<HFr> &logs) {
  typedef ref::Point<HF> R;
  R want;
  if (p.size() <= kAffineTerms) {
    want = ref::msm<HF>(p, s);
  } else {
    XYZZ<HF> x = msm_ref(p, s);
    want = R::from(x.to_affine());
    std::vector<Affine<HF>> sp;
    std::vector<HFr> ss;
    for (size_t k = 0; k < kSampleTerms; k++) {
      size_t i = k * (p.size() - 1) / (kSampleTerms - 1);
      sp.push_back(p[i]);
      ss.push_back(s[i]);
    }
    expect(R::from(msm_ref(sp, ss).to_affine()) == ref::msm<HF>(sp, ss),
           what + ": host XYZZ reference = affine reference on " + std::to_string(kSampleTerms) + " sampled terms");
  }
  if (!logs.empty())
    expect(ref::mul(R::from(g), dot(s, logs)) == want, what + ": host reference = (sum s_i*log_i)*G (affine)");
  return want;
}

static Jacobian<HFp> msm_gpu(Gpu &g, const std::vector<HA> &p, const std::vector<HFr> &s, int c,
                             perfbot_cuda_timings *t = nullptr) {
  perfbot_cuda_points *pts;
  REQUIRE(perfbot_cuda_g1_upload(g.ctx, p.data(), p.size(), &pts, E));
  Jacobian<HFp> j;
  REQUIRE(perfbot_cuda_msm_g1(g.ctx, pts, 0, s.data(), s.size(), c, &j, t, E));
  perfbot_cuda_g1_free(pts);
  return j;
}

static Jacobian<HFp2> msm_gpu2(Gpu &g, const std::vector<HA2> &p, const std::vector<HFr> &s, int c,
                               perfbot_cuda_timings *t = nullptr) {
  perfbot_cuda_points *pts;
  REQUIRE(perfbot_cuda_g2_upload(g.ctx, p.data(), p.size(), &pts, E));
  Jacobian<HFp2> j;
  REQUIRE(perfbot_cuda_msm_g2(g.ctx, pts, 0, s.data(), s.size(), c, &j, t, E));
  perfbot_cuda_g2_free(pts);
  return j;
}

// Host reference: iterative radix-2 DIT after a bit reversal.
static void ntt_ref(std::vector<HFr> &a, HFr w) {
  size_t n = a.size();
  for (size_t i = 1, j = 0; i < n; i++) {
    size_t bit = n >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (size_t len = 2; len <= n; len <<= 1) {
    HFr wl = w.pow_u64(n / len);
    for (size_t i = 0; i < n; i += len) {
      HFr t = HFr::one();
      for (size_t j = 0; j < len / 2; j++) {
        HFr u = a[i + j], v = a[i + j + len / 2] * t;
        a[i + j] = u + v;
        a[i + j + len / 2] = u - v;
        t = t * wl;
      }
    }
  }
}

// check_copy sends bytes through the staged path (16 MiB and more) and
// back, at sizes that are and are not whole staging chunks, and through
// the direct path below it. The bytes come from the run's seed like every
// other input (they were a fixed stream once, the same bytes every run):
// different bytes each run, the same ones again with --seed.
static void check_copy(Gpu &g) {
  use_stream(2);
  for (size_t bytes : {size_t(1) << 20, size_t(16) << 20, (size_t(37) << 20) + 12345, size_t(100) << 20}) {
    std::vector<uint64_t> a((bytes + 7) / 8), b(a.size(), 0);
    for (auto &x : a) x = rng();
    void *d;
    REQUIRE(perfbot_cuda_alloc(g.ctx, bytes, &d, E));
    REQUIRE(perfbot_cuda_copy(g.ctx, d, a.data(), bytes, 1, E));
    REQUIRE(perfbot_cuda_copy(g.ctx, b.data(), d, bytes, 0, E));
    REQUIRE(perfbot_cuda_free(g.ctx, d, E));
    expect(memcmp(a.data(), b.data(), bytes) == 0 && (bytes % 8 == 0 || b.back() >> (8 * (bytes % 8)) == 0),
           "copy of " + std::to_string(bytes) + " bytes to the device and back is exact");
  }
}

// check_ntt checks one context's transforms; what names the kernel
// settings it was opened with.
static void check_ntt(perfbot_cuda_ctx *ctx, const std::string &what) {
  HFr seven = HFr::zero();
  seven.v[0] = 7;
  seven = hfr_to_mont(seven);
  for (int log_n : {1, 2, 3, 5, 8, 10, 11, 13, 16, 18}) {
    size_t n = size_t(1) << log_n;
    HFr w = root_of_unity(log_n);
    auto x = rand_vec(n);
    auto ref = x;
    ntt_ref(ref, w);
    auto got = x;
    REQUIRE(perfbot_cuda_ntt(ctx, got.data(), log_n, PERFBOT_NTT_FORWARD, &w, nullptr, 0, nullptr, E));
    expect(got == ref, "ntt forward 2^" + std::to_string(log_n) + " = host reference" + what);
    // coset: scale by g^i then transform
    auto cref = x;
    HFr gi = HFr::one();
    for (auto &v : cref) {
      v = v * gi;
      gi = gi * seven;
    }
    ntt_ref(cref, w);
    auto cgot = x;
    REQUIRE(perfbot_cuda_ntt(ctx, cgot.data(), log_n, PERFBOT_NTT_FORWARD, &w, &seven, 0, nullptr, E));
    expect(cgot == cref, "ntt coset forward 2^" + std::to_string(log_n) + " = host reference" + what);
    REQUIRE(perfbot_cuda_ntt(ctx, got.data(), log_n, PERFBOT_NTT_INVERSE, &w, nullptr, 0, nullptr, E));
    expect(got == x, "ntt inverse(forward(x)) = x at 2^" + std::to_string(log_n) + what);
    REQUIRE(perfbot_cuda_ntt(ctx, cgot.data(), log_n, PERFBOT_NTT_INVERSE, &w, &seven, 0, nullptr, E));
    expect(cgot == x, "ntt coset inverse(coset forward(x)) = x at 2^" + std::to_string(log_n) + what);
  }
  for (int log_n : {20, 22, 24}) {
    size_t n = size_t(1) << log_n;
    HFr w = root_of_unity(log_n);
    auto x = rand_vec(n);
    auto got = x;
    REQUIRE(perfbot_cuda_ntt(ctx, got.data(), log_n, PERFBOT_NTT_FORWARD, &w, &seven, 0, nullptr, E));
    // spot check: a_j = Σ x_i (g ω^j)^i for a few j
    bool ok = true;
    for (int probe = 0; probe < 3; probe++) {
      size_t j = rng() % n;
      HFr pt = seven * w.pow_u64(j), acc = HFr::zero(), pw = HFr::one();
      for (size_t i = 0; i < n; i++) {
        acc = acc + x[i] * pw;
        pw = pw * pt;
      }
      ok = ok && acc == got[j];
    }
    expect(ok, "ntt coset forward 2^" + std::to_string(log_n) + ": 3 random outputs = direct evaluation" + what);
    REQUIRE(perfbot_cuda_ntt(ctx, got.data(), log_n, PERFBOT_NTT_INVERSE, &w, &seven, 0, nullptr, E));
    expect(got == x, "ntt coset round trip at 2^" + std::to_string(log_n) + what);
  }
  // a root of the wrong order is refused
  HFr w = root_of_unity(4);
  std::vector<HFr> x(32);
  perfbot_cuda_error e;
  int rc = perfbot_cuda_ntt(ctx, x.data(), 5, PERFBOT_NTT_FORWARD, &w, nullptr, 0, nullptr, &e);
  expect(rc == PERFBOT_CUDA_ERR_ARGUMENT && strstr(e.message, "primitive"), "wrong root refused" + what + ": " + e.message);
}

// check_ntt_settings checks the transforms under every kernel setting
// (PERFBOT_NTT_RADIX × PERFBOT_NTT_TWIST), each in a context of its own,
// and that a bad setting is refused with a message naming it.
static void check_ntt_settings() {
  use_stream(3);
  for (const char *radix : {"2", "4", "8"})
    for (const char *twist : {"table", "pow"}) {
      setenv("PERFBOT_NTT_RADIX", radix, 1);
      setenv("PERFBOT_NTT_TWIST", twist, 1);
      perfbot_cuda_ctx *ctx;
      REQUIRE(perfbot_cuda_open(0, &ctx, E));
      check_ntt(ctx, std::string(" (radix ") + radix + ", twist " + twist + ")");
      perfbot_cuda_close(ctx);
    }
  setenv("PERFBOT_NTT_RADIX", "16", 1);
  perfbot_cuda_ctx *ctx = nullptr;
  perfbot_cuda_error e;
  int rc = perfbot_cuda_open(0, &ctx, &e);
  expect(rc == PERFBOT_CUDA_ERR_ARGUMENT && strstr(e.message, "PERFBOT_NTT_RADIX=16") && !ctx,
         std::string("PERFBOT_NTT_RADIX=16 refused: ") + e.message);
  unsetenv("PERFBOT_NTT_RADIX");
  unsetenv("PERFBOT_NTT_TWIST");
}

// points_have_logs checks what the discrete-log references rest on: that
// make_points' points are (a + i·b)·G, on the first, second, middle and
// last point.
template <class HF>
static bool points_have_logs(const std::vector<Affine<HF>> &p, const Affine<HF> &g, const HFr &a, const HFr &b) {
  typedef ref::Point<HF> R;
  bool ok = true;
  for (size_t i : {size_t(0), size_t(1), p.size() / 2, p.size() - 1})
    ok = ok && ref::mul(R::from(g), a + fr_of(i) * b) == R::from(p[i]);
  return ok;
}

static void check_arith() {
  use_stream(1);
  const int n = 4096;
  std::vector<HFp> a(n), b(n), want(n), got(n);
  for (int i = 0; i < n; i++) {
    for (auto &w : a[i].v) w = rng();
    for (auto &w : b[i].v) w = rng();
    a[i].v[5] &= 0x0fffffffffffffffull; // below p
    b[i].v[5] &= 0x0fffffffffffffffull;
    if (i == 0) a[i] = HFp::zero() - HFp::one(); // p − 1
    want[i] = a[i] * b[i] + a[i].sqr() - b[i];
  }
  DFp *d;
  cudaMalloc(&d, 3 * n * sizeof(DFp));
  cudaMemcpy(d, a.data(), n * sizeof(DFp), cudaMemcpyHostToDevice);
  cudaMemcpy(d + n, b.data(), n * sizeof(DFp), cudaMemcpyHostToDevice);
  fp_mul_kernel<<<(n + 127) / 128, 128>>>(d, d + n, d + 2 * n, n);
  cudaMemcpy(got.data(), d + 2 * n, n * sizeof(DFp), cudaMemcpyDeviceToHost);
  cudaFree(d);
  expect(got == want, "device Fp a·b + a² − b = host (4096 random, p − 1)");
  HFr la, lb;
  auto pts = make_points(4096, &la, &lb);
  bool ok = true;
  for (auto &p : pts) ok = ok && on_curve(p) && !p.is_inf();
  expect(ok, "device-generated points are on the curve");
  HA g = generator();
  expect(on_curve(g), "generator on the curve");
  expect(points_have_logs(pts, g, la, lb), "device-generated points P_i = (a + i*b)*G: 4 sampled, affine reference");

  std::vector<HFp2> a2(n), b2(n), want2(n), got2(n);
  for (int i = 0; i < n; i++) {
    a2[i] = HFp2{a[i], b[(i + 1) % n]};
    b2[i] = HFp2{b[i], a[(i + 7) % n]};
    want2[i] = a2[i] * b2[i] + a2[i].sqr() - b2[i];
  }
  DFp2 *d2;
  cudaMalloc(&d2, 3 * n * sizeof(DFp2));
  cudaMemcpy(d2, a2.data(), n * sizeof(DFp2), cudaMemcpyHostToDevice);
  cudaMemcpy(d2 + n, b2.data(), n * sizeof(DFp2), cudaMemcpyHostToDevice);
  fp2_mul_kernel<<<(n + 127) / 128, 128>>>(d2, d2 + n, d2 + 2 * n, n);
  cudaMemcpy(got2.data(), d2 + 2 * n, n * sizeof(DFp2), cudaMemcpyDeviceToHost);
  cudaFree(d2);
  expect(got2 == want2, "device Fp2 a·b + a² − b = host (4096 random)");
  HA2 g2 = generator2();
  expect(on_curve(g2), "G2 generator on the curve");
  auto pts2 = make_points2(1024, &la, &lb);
  ok = true;
  for (auto &p : pts2) ok = ok && on_curve(p) && !p.is_inf();
  expect(ok, "device-generated G2 points are on the curve");
  expect(points_have_logs(pts2, g2, la, lb), "device-generated G2 points P_i = (a + i*b)*G: 4 sampled, affine reference");
}

// Group bundles what the MSM checks need of G1 or G2: the prefix of the
// checks' names, the generator, make_points and the device's MSM.
template <class HF> struct Group {
  const char *name;
  Affine<HF> g;
  std::vector<Affine<HF>> (*make)(uint64_t, HFr *, HFr *);
  Jacobian<HF> (*msm)(Gpu &, const std::vector<Affine<HF>> &, const std::vector<HFr> &, int, perfbot_cuda_timings *);
};

// check_msm_of checks one group's device MSM: one point with small
// scalars and random inputs of the given sizes against msm_want (the
// affine reference up to kAffineTerms terms), edge cases at edge_n terms,
// and 2^16 and 2^20 terms at the default window, window 9 and the given
// windows against (Σ s_i·log_i)·G by the affine reference.
template <class HF>
static void check_msm_of(Gpu &gpu, const Group<HF> &grp, std::initializer_list<size_t> sizes, size_t edge_n,
                         std::initializer_list<int> windows) {
  typedef ref::Point<HF> R;
  typedef Affine<HF> A;
  const std::string pre = grp.name;
  const R G = R::from(grp.g);
  {
    auto p = grp.make(1, nullptr, nullptr);
    for (uint64_t k : std::initializer_list<uint64_t>{1, 2, 3, 255, 256, 257, 1ull << 40}) {
      HFr s = fr_of(k);
      R want = ref::mul(R::from(p[0]), s);
      expect(want.equals_jacobian(grp.msm(gpu, p, {s}, 0, nullptr)),
             pre + " 1 point, scalar " + std::to_string(k) + " = affine double-and-add");
    }
  }
  for (size_t n : sizes) {
    HFr a, b;
    auto p = grp.make(n, &a, &b);
    auto s = rand_vec(n);
    std::string what = pre + " " + std::to_string(n) + " random";
    R want = msm_want(what, grp.g, p, s, logs_of(n, a, b));
    std::string by = n <= kAffineTerms ? " = affine double-and-add" : " = host reference";
    expect(want.equals_jacobian(grp.msm(gpu, p, s, 0, nullptr)), what + by);
    expect(want.equals_jacobian(grp.msm(gpu, p, s, 4, nullptr)), what + ", window 4" + by);
  }
  size_t n = edge_n;
  HFr a, b;
  auto p = grp.make(n, &a, &b);
  auto l = logs_of(n, a, b);
  HFr rm1 = HFr::zero() - HFr::one(); // r − 1
  auto check_case = [&](const char *name, const std::vector<A> &pts, const std::vector<HFr> &s,
                        const std::vector<HFr> &logs) {
    R want = msm_want(pre + " edge: " + name, grp.g, pts, s, logs);
    expect(want.equals_jacobian(grp.msm(gpu, pts, s, 0, nullptr)), pre + " edge: " + name);
    expect(want.equals_jacobian(grp.msm(gpu, pts, s, 7, nullptr)), pre + " edge, window 7: " + name);
  };
  check_case("all scalars zero", p, std::vector<HFr>(n, HFr::zero()), l);
  check_case("all scalars r-1", p, std::vector<HFr>(n, rm1), l);
  check_case("all scalars equal", p, std::vector<HFr>(n, rand_fr()), l);
  check_case("all scalars one", p, std::vector<HFr>(n, HFr::one()), l);
  {
    auto s = rand_vec(n);
    for (size_t i = 0; i < n; i += 3) s[i] = HFr::zero();
    check_case("a third zero", p, s, l);
  }
  {
    auto q = p;
    auto lq = l;
    for (size_t i = 0; i < n; i++) {
      q[i] = p[i % 7];
      lq[i] = l[i % 7];
    }
    check_case("repeated points", q, rand_vec(n), lq);
  }
  {
    auto q = p;
    auto lq = l;
    for (size_t i = 0; i < n; i += 5) {
      q[i] = A{HF::zero(), HF::zero()};
      lq[i] = HFr::zero();
    }
    check_case("points at infinity", q, rand_vec(n), lq);
  }
  {
    // P and −P with equal scalars cancel: bucket sums hit P + (−P).
    std::vector<A> q;
    std::vector<HFr> s, lq;
    HFr k = rand_fr();
    for (size_t i = 0; i < 50; i++) {
      q.push_back(p[i]);
      q.push_back(p[i].neg());
      s.push_back(k);
      s.push_back(k);
      lq.push_back(l[i]);
      lq.push_back(HFr::zero() - l[i]);
    }
    check_case("P and -P cancel", q, s, lq);
  }
  // Large sizes: every window against the discrete-log reference (the
  // windows share no bucket structure, the reference no device code).
  for (int log_n : {16, 20}) {
    size_t n = size_t(1) << log_n;
    HFr a, b;
    auto p = grp.make(n, &a, &b);
    auto s = rand_vec(n);
    auto l = logs_of(n, a, b);
    std::string what = pre + " 2^" + std::to_string(log_n);
    R want = ref::mul(G, dot(s, l));
    expect(!want.inf && want.equals_jacobian(grp.msm(gpu, p, s, 0, nullptr)),
           what + ": default window = (sum s_i*log_i)*G (affine)");
    for (int c : windows)
      expect(want.equals_jacobian(grp.msm(gpu, p, s, c, nullptr)),
             what + ": window " + std::to_string(c) + " = (sum s_i*log_i)*G (affine)");
    std::vector<HFr> eq(n, s[0]);
    R want_eq = ref::mul(G, dot(eq, l));
    expect(want_eq.equals_jacobian(grp.msm(gpu, p, eq, 0, nullptr)) && want_eq.equals_jacobian(grp.msm(gpu, p, eq, 11, nullptr)),
           what + " all scalars equal: default window and window 11 = (s*sum log_i)*G (affine)");
  }
}

static void check_msm(Gpu &g) {
  use_stream(4);
  check_msm_of<HFp>(g, Group<HFp>{"msm", generator(), make_points, msm_gpu}, {1, 2, 3, 100, 1000}, 1000, {9, 16, 18, 20});
}

// check_msm2 is check_msm for G2: the same kernels over Fp2 (cuda/gen/
// check_fp2.cpp checks curve.cuh's G2 formulas and cuda/gen/
// check_ref_affine.cpp the affine reference against gnark-crypto).
static void check_msm2(Gpu &g) {
  use_stream(5);
  check_msm_of<HFp2>(g, Group<HFp2>{"g2 msm", generator2(), make_points2, msm_gpu2}, {1, 2, 3, 16, 100, 1000}, 500,
                     {9, 13, 16, 18});
  {
    // G1 points handed to the G2 MSM are refused.
    auto p1 = make_points(4);
    perfbot_cuda_points *pts;
    REQUIRE(perfbot_cuda_g1_upload(g.ctx, p1.data(), p1.size(), &pts, E));
    auto s = rand_vec(4);
    Jacobian<HFp2> j;
    perfbot_cuda_error e;
    int rc = perfbot_cuda_msm_g2(g.ctx, pts, 0, s.data(), s.size(), 0, &j, nullptr, &e);
    perfbot_cuda_g1_free(pts);
    expect(rc == PERFBOT_CUDA_ERR_ARGUMENT && strstr(e.message, "G1 points"), std::string("G1 points refused by the G2 MSM: ") + e.message);
  }
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Each timed MSM's result is checked, every call of it, against the
// discrete-log reference: the bench's points are make_points' P_i =
// (a + i·b)·G, so the first n of them with scalars s_i sum to
// (Σ_{i<n} s_i·(a + i·b))·G, one Fr product a term on the host (once, for
// every timed size together) and one affine scalar multiplication a size.
// It shares no code with the device's MSM (host Fr arithmetic and
// ref_affine.h's law), so a wrong sum at any size or window, a race that
// differs from call to call, or a dropped or repeated point fails it
// except with probability about 1/r; the logs themselves are checked on
// sampled points first. The verdict ("ok" or "FAIL") is the row's check
// column; a FAIL makes the program exit 1. The NTT and quotient rows are
// not checked here ("-"): check mode checks the NTT at these sizes, and
// prover/gpu's Go tests the quotient.
static const char *verdict(bool ok) {
  if (!ok) failures++;
  return ok ? "ok" : "FAIL";
}

static void print_header() {
  printf("\n%-12s %10s %10s  %-5s  %s\n", "what", "n", "median ms", "check", "steps (last run)");
}

static void bench(Gpu &g, int max_log, bool only_ntt) {
  use_stream(6);
  auto steps = [](const perfbot_cuda_timings &t) {
    std::string s;
    for (int i = 0; i < t.n; i++) {
      char b[64];
      snprintf(b, sizeof b, "%s=%.2f ", t.t[i].name, t.t[i].ms);
      s += b;
    }
    return s;
  };
  int top = only_ntt ? 15 : std::min(max_log, 26); // only_ntt: no MSM sizes (the loop starts at 16)
  HFr la, lb;
  HA g1 = generator();
  auto all = make_points(size_t(1) << top, &la, &lb);
  if (!only_ntt) expect(points_have_logs(all, g1, la, lb), "bench points P_i = (a + i*b)*G: 4 sampled, affine reference");
  print_header();
  perfbot_cuda_points *pts;
  REQUIRE(perfbot_cuda_g1_upload(g.ctx, all.data(), all.size(), &pts, E));
  all.clear();
  all.shrink_to_fit();
  auto scal = rand_vec(size_t(1) << top);
  std::vector<uint64_t> ns;
  for (int log_n = 16; log_n <= top; log_n += 2) ns.push_back(1ull << log_n);
  auto dots = prefix_dots(scal, la, lb, ns);
  for (size_t k = 0; k < ns.size(); k++) {
    uint64_t n = ns[k];
    RP want = ref::mul(RP::from(g1), dots[k]);
    std::vector<double> ms;
    perfbot_cuda_timings t;
    Jacobian<HFp> out;
    bool ok = true;
    for (int r = 0; r < 7; r++) {
      cudaDeviceSynchronize();
      auto t0 = std::chrono::steady_clock::now();
      REQUIRE(perfbot_cuda_msm_g1(g.ctx, pts, 0, scal.data(), n, 0, &out, &t, E));
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      ok = ok && want.equals_jacobian(out);
    }
    printf("%-12s %10llu %10.2f  %-5s  %s\n", "msm_g1", (unsigned long long)n, median(ms), verdict(ok), steps(t).c_str());
    fflush(stdout);
    if (n < (1u << 20)) continue;
    for (int c : {14, 16, 17, 18, 19, 20}) { // window sizes from 2^20 up
      ms.clear();
      ok = true;
      for (int r = 0; r < 3; r++) {
        auto t0 = std::chrono::steady_clock::now();
        REQUIRE(perfbot_cuda_msm_g1(g.ctx, pts, 0, scal.data(), n, c, &out, &t, E));
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        ok = ok && want.equals_jacobian(out);
      }
      char what[32];
      snprintf(what, sizeof what, "msm_g1_c%d", c);
      printf("%-12s %10llu %10.2f  %-5s  %s\n", what, (unsigned long long)n, median(ms), verdict(ok), steps(t).c_str());
    }
  }
  perfbot_cuda_g1_free(pts);
  for (int log_n : {20, 22, 24}) {
    if (log_n > max_log) break;
    uint64_t n = 1ull << log_n;
    HFr w = root_of_unity(log_n);
    auto x = rand_vec(n);
    void *d;
    REQUIRE(perfbot_cuda_alloc(g.ctx, n * 32, &d, E));
    REQUIRE(perfbot_cuda_copy(g.ctx, d, x.data(), n * 32, 1, E));
    std::vector<double> dev, host;
    perfbot_cuda_timings t;
    for (int r = 0; r < 9; r++) {
      cudaDeviceSynchronize();
      auto t0 = std::chrono::steady_clock::now();
      REQUIRE(perfbot_cuda_ntt(g.ctx, d, log_n, PERFBOT_NTT_FORWARD, &w, nullptr, PERFBOT_NTT_DEVICE_DATA, &t, E));
      dev.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    printf("%-12s %10llu %10.2f  %-5s  %s\n", "ntt_device", (unsigned long long)n, median(dev), "-", steps(t).c_str());
    for (int r = 0; r < 5; r++) {
      auto t0 = std::chrono::steady_clock::now();
      REQUIRE(perfbot_cuda_ntt(g.ctx, x.data(), log_n, PERFBOT_NTT_FORWARD, &w, nullptr, 0, &t, E));
      host.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    printf("%-12s %10llu %10.2f  %-5s  %s\n", "ntt_host", (unsigned long long)n, median(host), "-", steps(t).c_str());
    REQUIRE(perfbot_cuda_free(g.ctx, d, E));
    HFr seven = HFr::zero();
    seven.v[0] = 7;
    seven = hfr_to_mont(seven);
    auto b = rand_vec(n), c = rand_vec(n);
    std::vector<double> q;
    for (int r = 0; r < 3; r++) {
      auto t0 = std::chrono::steady_clock::now();
      REQUIRE(perfbot_cuda_quotient(g.ctx, x.data(), b.data(), c.data(), log_n, &w, &seven, &t, E));
      q.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    printf("%-12s %10llu %10.2f  %-5s  %s\n", "quotient", (unsigned long long)n, median(q), "-", steps(t).c_str());
    fflush(stdout);
  }
}

// bench_g2 times the G2 MSM from 2^16 to 2^max_log (every second size)
// with the default window, and at 2^20 and up with windows around it,
// every call's result checked as bench's G1 MSM's are.
static void bench_g2(Gpu &g, int max_log) {
  use_stream(7);
  int top = std::min(max_log, 24);
  HFr la, lb;
  HA2 g2 = generator2();
  auto all = make_points2(size_t(1) << top, &la, &lb);
  expect(points_have_logs(all, g2, la, lb), "bench G2 points P_i = (a + i*b)*G: 4 sampled, affine reference");
  print_header();
  perfbot_cuda_points *pts;
  REQUIRE(perfbot_cuda_g2_upload(g.ctx, all.data(), all.size(), &pts, E));
  all.clear();
  all.shrink_to_fit();
  auto scal = rand_vec(size_t(1) << top);
  std::vector<uint64_t> ns;
  for (int log_n = 16; log_n <= top; log_n += 2) ns.push_back(1ull << log_n);
  auto dots = prefix_dots(scal, la, lb, ns);
  for (size_t k = 0; k < ns.size(); k++) {
    uint64_t n = ns[k];
    int log_n = 16 + 2 * (int)k;
    RP2 want = ref::mul(RP2::from(g2), dots[k]);
    for (int c : {0, 14, 16, 17, 18, 19, 20}) {
      if (c && (log_n < 20 || c > log_n - 2)) continue;
      std::vector<double> ms;
      perfbot_cuda_timings t;
      Jacobian<HFp2> out;
      bool ok = true;
      for (int r = 0; r < (c ? 3 : 5); r++) {
        auto t0 = std::chrono::steady_clock::now();
        REQUIRE(perfbot_cuda_msm_g2(g.ctx, pts, 0, scal.data(), n, c, &out, &t, E));
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        ok = ok && want.equals_jacobian(out);
      }
      char what[32];
      snprintf(what, sizeof what, c ? "msm_g2_c%d" : "msm_g2", c);
      std::string st;
      for (int i = 0; i < t.n; i++) {
        char b[64];
        snprintf(b, sizeof b, "%s=%.2f ", t.t[i].name, t.t[i].ms);
        st += b;
      }
      printf("%-12s %10llu %10.2f  %-5s  %s\n", what, (unsigned long long)n, median(ms), verdict(ok), st.c_str());
      fflush(stdout);
    }
  }
  perfbot_cuda_g2_free(pts);
}

// bench_transfers times 512 MiB host↔device copies three ways: straight
// from pageable memory, through the library's pinned staging buffers, and
// from a buffer pinned for the occasion (what pinning itself costs).
static void bench_transfers(Gpu &g) {
  const size_t bytes = size_t(512) << 20;
  std::vector<char> host(bytes, 1);
  void *d;
  REQUIRE(perfbot_cuda_alloc(g.ctx, bytes, &d, E));
  auto ms = [](std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  auto time_copy = [&](perfbot_cuda_ctx *ctx, int to_device, double *first) {
    std::vector<double> v;
    for (int r = 0; r < 6; r++) {
      auto t0 = std::chrono::steady_clock::now();
      REQUIRE(to_device ? perfbot_cuda_copy(ctx, d, host.data(), bytes, 1, E)
                        : perfbot_cuda_copy(ctx, host.data(), d, bytes, 0, E));
      double t = ms(t0);
      if (r == 0 && first) *first = t;
      if (r > 0) v.push_back(t);
    }
    return median(v);
  };
  printf("\ntransfers of 512 MiB (median of 5; GB/s = 10^9 bytes/s)\n");
  // A context of its own, so staging is pinned on this first call.
  perfbot_cuda_ctx *staged;
  REQUIRE(perfbot_cuda_open(0, &staged, E));
  double first = 0;
  double up = time_copy(staged, 1, &first), down = time_copy(staged, 0, nullptr);
  printf("%-28s %8.2f ms %6.1f GB/s   (first call, pinning the staging buffers: %.2f ms)\n", "staged h2d", up,
         bytes / up / 1e6, first);
  printf("%-28s %8.2f ms %6.1f GB/s\n", "staged d2h", down, bytes / down / 1e6);
  perfbot_cuda_close(staged);
  setenv("PERFBOT_CUDA_STAGING", "0", 1);
  perfbot_cuda_ctx *direct;
  REQUIRE(perfbot_cuda_open(0, &direct, E));
  unsetenv("PERFBOT_CUDA_STAGING");
  up = time_copy(direct, 1, nullptr);
  down = time_copy(direct, 0, nullptr);
  printf("%-28s %8.2f ms %6.1f GB/s\n", "pageable h2d", up, bytes / up / 1e6);
  printf("%-28s %8.2f ms %6.1f GB/s\n", "pageable d2h", down, bytes / down / 1e6);
  auto t0 = std::chrono::steady_clock::now();
  cudaError_t e = cudaHostRegister(host.data(), bytes, cudaHostRegisterDefault);
  double reg = ms(t0);
  if (e == cudaSuccess) {
    up = time_copy(direct, 1, nullptr);
    t0 = std::chrono::steady_clock::now();
    cudaHostUnregister(host.data());
    double unreg = ms(t0);
    printf("%-28s %8.2f ms %6.1f GB/s   (pinning the 512 MiB: %.2f ms, unpinning: %.2f ms)\n", "registered h2d", up,
           bytes / up / 1e6, reg, unreg);
  } else {
    printf("cudaHostRegister: %s\n", cudaGetErrorString(e));
  }
  perfbot_cuda_close(direct);
  REQUIRE(perfbot_cuda_free(g.ctx, d, E));
  fflush(stdout);
}

int main(int argc, char **argv) {
  // Line-buffered, so that the seed stays the first line and stderr's
  // FAIL lines fall in place when both go to one log.
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // --seed N (or --seed=N) may stand anywhere; the rest are the mode and
  // its arguments, in order.
  std::vector<std::string> args;
  bool have_seed = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a != "--seed" && a.rfind("--seed=", 0) != 0) {
      args.push_back(a);
      continue;
    }
    std::string v = a == "--seed" ? (i + 1 < argc ? argv[++i] : "") : a.substr(7);
    if (!parse_u64(v, &seed)) {
      fprintf(stderr, "perfbot_cuda_selftest: --seed wants an unsigned decimal number below 2^64, got '%s'\n", v.c_str());
      return 2;
    }
    have_seed = true;
  }
  if (!have_seed) {
    std::random_device rd;
    seed = (uint64_t)rd() << 32 | rd();
  }
  printf("seed %llu (rerun with --seed %llu)\n", (unsigned long long)seed, (unsigned long long)seed);
  auto arg = [&](size_t i) { return i < args.size() ? args[i] : std::string(); };
  std::string mode = args.empty() ? "check" : args[0];
  printf("abi version %d\n", perfbot_cuda_abi_version());
  perfbot_cuda_device info;
  REQUIRE(perfbot_cuda_device_info(0, &info, E));
  printf("device %s (%s) sm_%d%d, %d SMs, %.1f GiB, driver %d, runtime %d\n", info.name, info.uuid, info.major,
         info.minor, info.multiprocessors, info.total_memory / 1073741824.0, info.driver_version, info.runtime_version);
  Gpu g;
  if (mode == "check") {
    bool only_msm = arg(1) == "msm";
    check_arith();
    if (!only_msm) {
      check_copy(g);
      check_ntt_settings();
    }
    check_msm(g);
    check_msm2(g);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
  }
  if (mode == "bench-g2") {
    bench_g2(g, args.size() > 1 ? atoi(args[1].c_str()) : 24);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
  }
  if (mode == "bench") {
    bool only_ntt = arg(2) == "ntt";
    if (!only_ntt) bench_transfers(g);
    bench(g, args.size() > 1 ? atoi(args[1].c_str()) : 24, only_ntt);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
  }
  if (mode == "once" && args.size() > 2) { // one operation, for a profiler: once msm|msm2|ntt LOG
    use_stream(8);
    int log_n = atoi(args[2].c_str());
    uint64_t n = 1ull << log_n;
    perfbot_cuda_timings t;
    if (args[1] == "msm2") {
      auto pts = make_points2(n);
      auto sc = rand_vec(n);
      perfbot_cuda_points *d;
      REQUIRE(perfbot_cuda_g2_upload(g.ctx, pts.data(), n, &d, E));
      Jacobian<HFp2> out;
      REQUIRE(perfbot_cuda_msm_g2(g.ctx, d, 0, sc.data(), n, 0, &out, &t, E));
      perfbot_cuda_g2_free(d);
    } else if (args[1] == "msm") {
      auto pts = make_points(n);
      auto sc = rand_vec(n);
      perfbot_cuda_points *d;
      REQUIRE(perfbot_cuda_g1_upload(g.ctx, pts.data(), n, &d, E));
      Jacobian<HFp> out;
      REQUIRE(perfbot_cuda_msm_g1(g.ctx, d, 0, sc.data(), n, 0, &out, &t, E));
      perfbot_cuda_g1_free(d);
    } else {
      HFr w = root_of_unity(log_n);
      auto x = rand_vec(n);
      void *d;
      REQUIRE(perfbot_cuda_alloc(g.ctx, n * 32, &d, E));
      REQUIRE(perfbot_cuda_copy(g.ctx, d, x.data(), n * 32, 1, E));
      REQUIRE(perfbot_cuda_ntt(g.ctx, d, log_n, PERFBOT_NTT_FORWARD, &w, nullptr, PERFBOT_NTT_DEVICE_DATA, &t, E));
      REQUIRE(perfbot_cuda_free(g.ctx, d, E));
    }
    for (int i = 0; i < t.n; i++) printf("%s=%.2f ", t.t[i].name, t.t[i].ms);
    printf("\n");
    return 0;
  }
  fprintf(stderr, "usage: perfbot_cuda_selftest [--seed N] check [msm] | bench [MAXLOG [ntt]] | bench-g2 [MAXLOG] | once msm|msm2|ntt LOG\n");
  return 2;
}

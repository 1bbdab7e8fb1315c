// selftest.cu — build/perfbot_cuda_selftest: checks libperfbot_cuda.so
// through its C ABI on the GPU machine, with references written on the
// host, and times it. The Go tests in prover/gpu check the same library
// against gnark-crypto; this program needs no Go toolchain, which the GPU
// machine lacks.
//
//   perfbot_cuda_selftest check          correctness, exit 1 on a mismatch
//   perfbot_cuda_selftest bench [MAXLOG] timings, one table row per size
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "curve.cuh"
#include "perfbot_cuda.h"

using namespace pb;
typedef XYZZ<HFp> HX;
typedef Affine<HFp> HA;

static int failures = 0;
static std::mt19937_64 rng(std::random_device{}());

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

// rand_fr draws a uniform element below r (rejection sampling).
static HFr rand_fr() {
  for (;;) {
    HFr x;
    for (auto &w : x.v) w = rng();
    x.v[3] &= 0x7fffffffffffffffull; // r < 2^255
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
      unsigned __int128 d = (unsigned __int128)x.v[i] - HFr::modw(i) - borrow;
      borrow = (uint64_t)(d >> 64) & 1;
    }
    if (borrow) return hfr_to_mont(x); // x − r borrowed: x < r
  }
}

static HA generator() {
  const char *X = "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb";
  const char *Y = "08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1";
  auto parse = [](const char *h, HFp &o) {
    for (int i = 0; i < 6; i++) {
      char buf[17];
      memcpy(buf, h + (5 - i) * 16, 16);
      buf[16] = 0;
      o.v[i] = strtoull(buf, 0, 16);
    }
    o = hfp_to_mont(o);
  };
  HA g;
  parse(X, g.x);
  parse(Y, g.y);
  return g;
}

static HX mul(const HX &p, const HFr &s_mont) {
  HFr s = s_mont.from_mont();
  HX acc = HX::inf();
  for (int i = 255; i >= 0; i--) {
    acc = acc.dbl();
    if ((s.v[i / 64] >> (i % 64)) & 1) acc = acc.add(p);
  }
  return acc;
}

static bool same_point(const HX &a, const HX &b) {
  if (a.is_inf() || b.is_inf()) return a.is_inf() && b.is_inf();
  HA x = a.to_affine(), y = b.to_affine();
  return x.x == y.x && x.y == y.y;
}

static HX from_jac(const Jacobian<HFp> &j) {
  if (j.z.is_zero()) return HX::inf();
  // x = X/Z², y = Y/Z³: XYZZ with ZZ = Z², ZZZ = Z³.
  HFp zz = j.z.sqr();
  return HX{j.x, j.y, zz, zz * j.z};
}

// P_i = S + i·H on the device, then affine (one inversion per point).
__global__ void gen_points(Affine<DFp> *out, uint64_t n, XYZZ<DFp> s, XYZZ<DFp> h) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  XYZZ<DFp> acc = s;
  XYZZ<DFp> step = h;
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

struct Gpu {
  perfbot_cuda_ctx *ctx = nullptr;
  Gpu() { REQUIRE(perfbot_cuda_open(0, &ctx, E)); }
  ~Gpu() { perfbot_cuda_close(ctx); }
};

static std::vector<HA> make_points(uint64_t n) {
  HA g = generator();
  HX s = mul(HX::from_affine(g), rand_fr()), h = mul(HX::from_affine(g), rand_fr());
  Affine<DFp> *d;
  cudaMalloc(&d, n * sizeof *d);
  XYZZ<DFp> ds, dh;
  memcpy(&ds, &s, sizeof ds);
  memcpy(&dh, &h, sizeof dh);
  gen_points<<<(n + 127) / 128, 128>>>(d, n, ds, dh);
  std::vector<HA> out(n);
  cudaError_t e = cudaMemcpy(out.data(), d, n * sizeof *d, cudaMemcpyDeviceToHost);
  if (e != cudaSuccess) {
    fprintf(stderr, "gen_points: %s\n", cudaGetErrorString(e));
    exit(2);
  }
  cudaFree(d);
  return out;
}

static HX msm_ref(const std::vector<HA> &p, const std::vector<HFr> &s) {
  HX acc = HX::inf();
  for (size_t i = 0; i < p.size(); i++) acc = acc.add(mul(HX::from_affine(p[i]), s[i]));
  return acc;
}

static HX msm_gpu(Gpu &g, const std::vector<HA> &p, const std::vector<HFr> &s, int c,
                  perfbot_cuda_timings *t = nullptr) {
  perfbot_cuda_points *pts;
  REQUIRE(perfbot_cuda_g1_upload(g.ctx, p.data(), p.size(), &pts, E));
  Jacobian<HFp> j;
  REQUIRE(perfbot_cuda_msm_g1(g.ctx, pts, 0, s.data(), s.size(), c, &j, t, E));
  perfbot_cuda_g1_free(pts);
  return from_jac(j);
}

// ω of order 2^log_n: 7 generates Fr*, so 7^((r−1)/2^log_n).
static HFr root_of_unity(int log_n) {
  HFr seven = HFr::zero();
  seven.v[0] = 7;
  seven = hfr_to_mont(seven);
  uint32_t e[8];
  for (int i = 0; i < 8; i++) e[i] = FrParams::mod32(i);
  e[0] -= 1; // r − 1 (r is odd, so no borrow)
  // shift right by log_n
  for (int k = 0; k < log_n; k++) {
    for (int i = 0; i < 8; i++) e[i] = (e[i] >> 1) | (i + 1 < 8 ? e[i + 1] << 31 : 0);
  }
  return seven.pow(e, 8);
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

static std::vector<HFr> rand_vec(size_t n) {
  std::vector<HFr> v(n);
  for (auto &x : v) x = rand_fr();
  return v;
}

// check_copy sends bytes through the staged path (16 MiB and more) and
// back, at sizes that are and are not whole staging chunks, and through
// the direct path below it.
static void check_copy(Gpu &g) {
  std::mt19937_64 rng(7);
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

static void check_arith() {
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
  auto pts = make_points(4096);
  bool ok = true;
  for (auto &p : pts) ok = ok && on_curve(p) && !p.is_inf();
  expect(ok, "device-generated points are on the curve");
  HA g = generator();
  expect(on_curve(g), "generator on the curve");
}

static void check_msm(Gpu &g) {
  {
    auto p = make_points(1);
    for (uint64_t k : std::initializer_list<uint64_t>{1, 2, 3, 255, 256, 257, 1ull << 40}) {
      HFr s = HFr::zero();
      s.v[0] = k;
      s = hfr_to_mont(s);
      HX want = mul(HX::from_affine(p[0]), s);
      expect(same_point(msm_gpu(g, p, {s}, 0), want), "msm 1 point, scalar " + std::to_string(k));
    }
  }
  for (size_t n : {1, 2, 3, 100, 1000}) {
    auto p = make_points(n);
    auto s = rand_vec(n);
    HX want = msm_ref(p, s);
    expect(same_point(msm_gpu(g, p, s, 0), want), "msm " + std::to_string(n) + " random = host double-and-add");
    expect(same_point(msm_gpu(g, p, s, 4), want), "msm " + std::to_string(n) + " window 4 = host");
  }
  size_t n = 1000;
  auto p = make_points(n);
  HFr rm1 = HFr::zero() - HFr::one(); // r − 1
  auto check_case = [&](const char *name, std::vector<HA> pts, std::vector<HFr> s) {
    HX want = msm_ref(pts, s);
    expect(same_point(msm_gpu(g, pts, s, 0), want), std::string("msm edge: ") + name);
    expect(same_point(msm_gpu(g, pts, s, 7), want), std::string("msm edge, window 7: ") + name);
  };
  check_case("all scalars zero", p, std::vector<HFr>(n, HFr::zero()));
  check_case("all scalars r-1", p, std::vector<HFr>(n, rm1));
  check_case("all scalars equal", p, std::vector<HFr>(n, rand_fr()));
  check_case("all scalars one", p, std::vector<HFr>(n, HFr::one()));
  {
    auto s = rand_vec(n);
    for (size_t i = 0; i < n; i += 3) s[i] = HFr::zero();
    check_case("a third zero", p, s);
  }
  {
    auto q = p;
    for (size_t i = 0; i < n; i++) q[i] = p[i % 7];
    check_case("repeated points", q, rand_vec(n));
  }
  {
    auto q = p;
    for (size_t i = 0; i < n; i += 5) q[i] = HA{HFp::zero(), HFp::zero()};
    check_case("points at infinity", q, rand_vec(n));
  }
  {
    // P and −P with equal scalars cancel: bucket sums hit P + (−P).
    std::vector<HA> q;
    std::vector<HFr> s;
    HFr k = rand_fr();
    for (size_t i = 0; i < 50; i++) {
      q.push_back(p[i]);
      q.push_back(p[i].neg());
      s.push_back(k);
      s.push_back(k);
    }
    check_case("P and -P cancel", q, s);
  }
  // Large sizes: window sizes that share no bucket structure must agree.
  for (int log_n : {16, 20}) {
    size_t n = size_t(1) << log_n;
    auto p = make_points(n);
    auto s = rand_vec(n);
    HX a = msm_gpu(g, p, s, 0), b = msm_gpu(g, p, s, 9);
    expect(same_point(a, b) && !a.is_inf(), "msm 2^" + std::to_string(log_n) + ": default window = window 9");
    // The windows the large sizes use (16 to 20) and their reductions.
    for (int c : {16, 18, 20})
      expect(same_point(msm_gpu(g, p, s, c), a), "msm 2^" + std::to_string(log_n) + ": window " + std::to_string(c) + " = default");
    std::vector<HFr> eq(n, s[0]);
    HX c = msm_gpu(g, p, eq, 0), d = msm_gpu(g, p, eq, 11);
    expect(same_point(c, d), "msm 2^" + std::to_string(log_n) + " all scalars equal: windows agree");
  }
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

static void bench(Gpu &g, int max_log, bool only_ntt) {
  printf("\n%-12s %10s %10s  %s\n", "what", "n", "median ms", "steps (last run)");
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
  auto all = make_points(size_t(1) << top);
  perfbot_cuda_points *pts;
  REQUIRE(perfbot_cuda_g1_upload(g.ctx, all.data(), all.size(), &pts, E));
  all.clear();
  all.shrink_to_fit();
  auto scal = rand_vec(size_t(1) << top);
  for (int log_n = 16; log_n <= top; log_n += 2) {
    uint64_t n = 1ull << log_n;
    std::vector<double> ms;
    perfbot_cuda_timings t;
    Jacobian<HFp> out;
    for (int r = 0; r < 7; r++) {
      cudaDeviceSynchronize();
      auto t0 = std::chrono::steady_clock::now();
      REQUIRE(perfbot_cuda_msm_g1(g.ctx, pts, 0, scal.data(), n, 0, &out, &t, E));
      ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    printf("%-12s %10llu %10.2f  %s\n", "msm_g1", (unsigned long long)n, median(ms), steps(t).c_str());
    fflush(stdout);
    if (log_n < 20) continue;
    for (int c : {14, 16, 17, 18, 19, 20}) { // window sizes from 2^20 up
      ms.clear();
      for (int r = 0; r < 3; r++) {
        auto t0 = std::chrono::steady_clock::now();
        REQUIRE(perfbot_cuda_msm_g1(g.ctx, pts, 0, scal.data(), n, c, &out, &t, E));
        ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      char what[32];
      snprintf(what, sizeof what, "msm_g1_c%d", c);
      printf("%-12s %10llu %10.2f  %s\n", what, (unsigned long long)n, median(ms), steps(t).c_str());
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
    printf("%-12s %10llu %10.2f  %s\n", "ntt_device", (unsigned long long)n, median(dev), steps(t).c_str());
    for (int r = 0; r < 5; r++) {
      auto t0 = std::chrono::steady_clock::now();
      REQUIRE(perfbot_cuda_ntt(g.ctx, x.data(), log_n, PERFBOT_NTT_FORWARD, &w, nullptr, 0, &t, E));
      host.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    printf("%-12s %10llu %10.2f  %s\n", "ntt_host", (unsigned long long)n, median(host), steps(t).c_str());
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
    printf("%-12s %10llu %10.2f  %s\n", "quotient", (unsigned long long)n, median(q), steps(t).c_str());
    fflush(stdout);
  }
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
  std::string mode = argc > 1 ? argv[1] : "check";
  printf("abi version %d\n", perfbot_cuda_abi_version());
  perfbot_cuda_device info;
  REQUIRE(perfbot_cuda_device_info(0, &info, E));
  printf("device %s (%s) sm_%d%d, %d SMs, %.1f GiB, driver %d, runtime %d\n", info.name, info.uuid, info.major,
         info.minor, info.multiprocessors, info.total_memory / 1073741824.0, info.driver_version, info.runtime_version);
  Gpu g;
  if (mode == "check") {
    check_arith();
    check_copy(g);
    check_ntt_settings();
    check_msm(g);
    printf("%d failures\n", failures);
    return failures ? 1 : 0;
  }
  if (mode == "bench") {
    bool only_ntt = argc > 3 && std::string(argv[3]) == "ntt";
    if (!only_ntt) bench_transfers(g);
    bench(g, argc > 2 ? atoi(argv[2]) : 24, only_ntt);
    return 0;
  }
  if (mode == "once" && argc > 3) { // one operation, for a profiler: once msm|ntt LOG
    int log_n = atoi(argv[3]);
    uint64_t n = 1ull << log_n;
    perfbot_cuda_timings t;
    if (std::string(argv[2]) == "msm") {
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
  fprintf(stderr, "usage: perfbot_cuda_selftest check | bench [MAXLOG [ntt]] | once msm|ntt LOG\n");
  return 2;
}

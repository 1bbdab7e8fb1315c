// side_by_side.cu — build/perfbot_sppark_bench: our G1 MSM and Fr NTT
// (libperfbot_cuda.so, through its C ABI) and sppark's (supranational/
// sppark, built from source beside this file by sppark_side.cu) in one
// process, on the same inputs, every result of both compared. It is what
// BENCHMARKS.md's "× sppark" ratios are measured with: `make bench-sppark
// SPPARK=...` builds it, bench/sppark.sh runs it on the GPU machine. It is
// not part of the product (`make cuda` does not need sppark).
//
//   perfbot_sppark_bench [--sizes 20,22,24] [--reps N] [--seed N] [--only msm|ntt]
//
// For each size 2^k of --sizes (default 20, 22, 24):
//
//   msm_g1  n points P_i = (a + i·b)·G (random a, b; made on the device,
//           then kept on the host, so both libraries get the same bytes)
//           and n random scalars. The points are copied to the device once
//           for each library (perfbot_cuda_g1_upload; sppark's msm_t
//           constructor), the scalars are read from host memory on every
//           call, as the prover does. One unrecorded call each, then --reps
//           rounds of (ours, sppark's). Every result is compared with the
//           other library's of the same round and with (Σ s_i·(a + i·b))·G,
//           worked out on the host (field.cuh's Fr, ref_affine.h's affine
//           law), which shares no code with either MSM.
//   ntt     n random elements of Fr on the device for each library, forward
//           transform in place, natural order in and out (our
//           perfbot_cuda_ntt with PERFBOT_NTT_DEVICE_DATA; sppark's
//           NTT::Base_dev_ptr, NN). Both are given sppark's root of unity
//           (the program says whether it is ours, 7^((r−1)/2^k)); each
//           library transforms its own copy of the same data once a round,
//           so after every round both copies must be equal. After the
//           unrecorded first round one output is also checked against
//           direct evaluation on the host.
//
// Timings are wall-clock around each call, which both libraries return only
// when the result is there (an MSM's on the host, an NTT's on the device).
// Output: a seed line first (`seed N (rerun with --seed N)`), benchfmt
// configuration lines (gpu, sppark's commit), then Go benchmark lines, one a
// timed call (N = 1, so benchstat sees every repetition), e.g.
//
//   BenchmarkSideBySide/msm_g1/n=2^24/lib=perfbot 1 140800000 ns/op
//   BenchmarkSideBySide/msm_g1/n=2^24/lib=sppark 1 98700000 ns/op
//
// and after each size a summary line: median, min and max of each, and
// the ratio of the medians, ours over sppark's. Exit status 0; 1 on any
// mismatch (both results printed); 2 on a usage or library error.
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
#include "sppark_side.h"

using namespace pb;
typedef Affine<HFp> HA;
typedef Jacobian<HFp> HJ;
typedef ref::Point<HFp> RP;
typedef std::chrono::steady_clock Clock;

#define REQUIRE(call)                                                              \
  do {                                                                             \
    perfbot_cuda_error e_;                                                         \
    if ((call) != 0) {                                                             \
      fprintf(stderr, "perfbot_sppark_bench: %s: %s\n", #call, e_.message);       \
      exit(2);                                                                     \
    }                                                                              \
  } while (0)
#define E &e_

static void cuda_check(cudaError_t e, const char *what) {
  if (e != cudaSuccess) {
    fprintf(stderr, "perfbot_sppark_bench: %s: %s\n", what, cudaGetErrorString(e));
    exit(2);
  }
}

static void spk_check(bool ok, const std::string &err) {
  if (!ok) {
    fprintf(stderr, "perfbot_sppark_bench: %s\n", err.c_str());
    exit(2);
  }
}

// canon returns x reduced below the modulus. Both libraries keep elements
// below it, as far as their sources show; this makes the comparisons
// independent of that (a value ≥ p and its reduction are the same element).
template <class F> static F canon(F x) {
  for (;;) {
    bool below = false;
    for (int i = F::N - 1; i >= 0; i--) {
      if (x.v[i] != F::modw(i)) {
        below = x.v[i] < F::modw(i);
        break;
      }
    }
    if (below) return x;
    uint64_t borrow = 0;
    for (int i = 0; i < F::N; i++) {
      unsigned __int128 d = (unsigned __int128)x.v[i] - F::modw(i) - borrow;
      x.v[i] = (uint64_t)d;
      borrow = (uint64_t)(d >> 64) & 1;
    }
  }
}

static HJ canon(const HJ &j) { return HJ{canon(j.x), canon(j.y), canon(j.z)}; }

// gen_points writes P_i = S + i·H for i < n, affine: double-and-add over
// the bits of i from S, in XYZZ, then one inversion a point.
__global__ void gen_points(Affine<DFp> *out, uint64_t n, XYZZ<DFp> s, XYZZ<DFp> h) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  XYZZ<DFp> acc = s, step = h;
  for (uint64_t k = i; k; k >>= 1) {
    if (k & 1) acc = acc.add(step);
    step = step.dbl();
  }
  out[i] = acc.to_affine();
}

// make_points returns P_i = (a + i·b)·G for i < n and random a, b, made on
// the device: S = a·G and H = b·G come from the affine reference, so the
// points' discrete logs do not rest on curve.cuh; four of them are checked.
static std::vector<HA> make_points(uint64_t n, HFr *a, HFr *b) {
  *a = rand_fr();
  *b = rand_fr();
  const RP G = RP::from(generator());
  XYZZ<HFp> s = XYZZ<HFp>::from_affine(ref::mul(G, *a).to_layout<HA>());
  XYZZ<HFp> h = XYZZ<HFp>::from_affine(ref::mul(G, *b).to_layout<HA>());
  XYZZ<DFp> ds, dh;
  static_assert(sizeof ds == sizeof s && sizeof(Affine<DFp>) == sizeof(HA), "host and device points agree");
  memcpy(&ds, &s, sizeof ds);
  memcpy(&dh, &h, sizeof dh);
  Affine<DFp> *d;
  cuda_check(cudaMalloc(&d, n * sizeof *d), "cudaMalloc (points)");
  gen_points<<<(n + 127) / 128, 128>>>(d, n, ds, dh);
  cuda_check(cudaGetLastError(), "gen_points");
  std::vector<HA> out(n);
  cuda_check(cudaMemcpy(out.data(), d, n * sizeof *d, cudaMemcpyDeviceToHost), "cudaMemcpy (points)");
  cuda_check(cudaFree(d), "cudaFree (points)");
  for (uint64_t i : {uint64_t(0), uint64_t(1), n / 2, n - 1}) {
    if (ref::mul(G, *a + fr_of(i) * *b) != RP::from(out[i])) {
      fprintf(stderr, "perfbot_sppark_bench: generated point %llu is not (a + i*b)*G\n", (unsigned long long)i);
      exit(2);
    }
  }
  return out;
}

// same_point compares two Jacobian points without an inversion:
// X1·Z2² = X2·Z1² and Y1·Z2³ = Y2·Z1³ (Z = 0 is infinity).
static bool same_point(HJ p, HJ q) {
  p = canon(p);
  q = canon(q);
  if (p.z.is_zero() || q.z.is_zero()) return p.z.is_zero() && q.z.is_zero();
  HFp pz2 = p.z * p.z, qz2 = q.z * q.z;
  return p.x * qz2 == q.x * pz2 && p.y * qz2 * q.z == q.y * pz2 * p.z;
}

// hex_std writes an element in standard form, most significant digit first.
template <class F> static std::string hex_std(const F &m) {
  F s = canon(m).from_mont();
  std::string out = "0x";
  char buf[17];
  for (int i = F::N - 1; i >= 0; i--) {
    snprintf(buf, sizeof buf, "%016llx", (unsigned long long)s.v[i]);
    out += buf;
  }
  return out;
}

static void print_point(const char *who, const HJ &j) {
  RP a = ref::from_jacobian<HFp>(canon(j));
  if (a.inf)
    printf("  %-8s infinity (Z = 0)\n", who);
  else
    printf("  %-8s x = %s\n  %-8s y = %s\n", who, hex_std(a.x).c_str(), "", hex_std(a.y).c_str());
}

static double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

static double since_ns(Clock::time_point t0) {
  return std::chrono::duration<double, std::nano>(Clock::now() - t0).count();
}

static void print_bench(const char *what, int log_n, const char *lib, double ns) {
  printf("BenchmarkSideBySide/%s/n=2^%d/lib=%s 1 %.0f ns/op\n", what, log_n, lib, ns);
}

static void print_summary(const char *what, int log_n, const std::vector<double> &ours,
                          const std::vector<double> &theirs, const std::string &note) {
  double mo = median(ours), ms = median(theirs);
  printf("summary %s n=2^%d  perfbot %.2f ms [%.2f, %.2f]  sppark %.2f ms [%.2f, %.2f]  perfbot/sppark %.3f"
         "  (median [min, max] of %zu; %s)\n",
         what, log_n, mo / 1e6, *std::min_element(ours.begin(), ours.end()) / 1e6,
         *std::max_element(ours.begin(), ours.end()) / 1e6, ms / 1e6,
         *std::min_element(theirs.begin(), theirs.end()) / 1e6, *std::max_element(theirs.begin(), theirs.end()) / 1e6,
         mo / ms, ours.size(), note.c_str());
  fflush(stdout);
}

struct Options {
  std::vector<int> sizes{20, 22, 24}; // log2 of n, ascending, distinct
  int reps = 7;
  bool msm = true, ntt = true;
};

// bench_msm runs the MSM rounds at every size: see the file's comment.
static void bench_msm(perfbot_cuda_ctx *ctx, const Options &o) {
  use_stream(1);
  const int top = o.sizes.back();
  HFr a, b;
  auto points = make_points(uint64_t(1) << top, &a, &b);
  auto scalars = rand_vec(size_t(1) << top);
  std::vector<uint64_t> ns;
  for (int k : o.sizes) ns.push_back(uint64_t(1) << k);
  auto dots = prefix_dots(scalars, a, b, ns);
  const RP G = RP::from(generator());
  for (size_t k = 0; k < ns.size(); k++) {
    const uint64_t n = ns[k];
    const int log_n = o.sizes[k];
    const RP want = ref::mul(G, dots[k]);
    perfbot_cuda_points *pts;
    REQUIRE(perfbot_cuda_g1_upload(ctx, points.data(), n, &pts, E));
    std::string err;
    spk::Msm *sm = spk::msm_new(points.data(), n, &err);
    spk_check(sm != nullptr, err);
    HJ ours, theirs;
    auto check = [&](int round) {
      bool ok_ours = want.equals_jacobian(canon(ours)), ok_theirs = want.equals_jacobian(canon(theirs));
      if (ok_ours && ok_theirs && same_point(ours, theirs)) return;
      printf("MISMATCH msm_g1 n=2^%d %s: perfbot %s, sppark %s the host's (sum s_i*(a + i*b))*G\n", log_n,
             round < 0 ? "warm-up" : ("round " + std::to_string(round + 1)).c_str(),
             ok_ours ? "equals" : "differs from", ok_theirs ? "equals" : "differs from");
      print_point("perfbot", ours);
      print_point("sppark", theirs);
      printf("  %-8s x = %s\n  %-8s y = %s\n", "host", hex_std(want.x).c_str(), "", hex_std(want.y).c_str());
      printf("seed %llu: rerun with --seed %llu\n", (unsigned long long)seed, (unsigned long long)seed);
      exit(1);
    };
    REQUIRE(perfbot_cuda_msm_g1(ctx, pts, 0, scalars.data(), n, 0, &ours, nullptr, E));
    spk_check(spk::msm_run(sm, scalars.data(), n, &theirs, &err), err);
    check(-1);
    std::vector<double> t_ours, t_theirs;
    for (int r = 0; r < o.reps; r++) {
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      auto t0 = Clock::now();
      REQUIRE(perfbot_cuda_msm_g1(ctx, pts, 0, scalars.data(), n, 0, &ours, nullptr, E));
      t_ours.push_back(since_ns(t0));
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      t0 = Clock::now();
      spk_check(spk::msm_run(sm, scalars.data(), n, &theirs, &err), err);
      t_theirs.push_back(since_ns(t0));
      check(r);
      print_bench("msm_g1", log_n, "perfbot", t_ours.back());
      print_bench("msm_g1", log_n, "sppark", t_theirs.back());
    }
    spk::msm_free(sm);
    perfbot_cuda_g1_free(pts);
    print_summary("msm_g1", log_n, t_ours, t_theirs,
                  "points resident in both, scalars from host memory; every result = the other's = the host's; "
                  "window: perfbot's default, sppark's " +
                      std::to_string(spk::msm_window_bits(n)));
  }
}

static HFr spk_root(int log_n) {
  HFr w;
  static_assert(sizeof w == 32, "Fr is 32 bytes");
  spk::ntt_root(log_n, &w);
  return canon(w);
}

// download_ntt copies both libraries' transforms to the host, reduced.
static void download_ntt(perfbot_cuda_ctx *ctx, void *d_ours, void *d_theirs, std::vector<HFr> &ours,
                         std::vector<HFr> &theirs) {
  REQUIRE(perfbot_cuda_copy(ctx, ours.data(), d_ours, ours.size() * sizeof(HFr), 0, E));
  cuda_check(cudaMemcpy(theirs.data(), d_theirs, theirs.size() * sizeof(HFr), cudaMemcpyDeviceToHost),
             "cudaMemcpy (sppark's NTT)");
  for (auto &x : ours) x = canon(x);
  for (auto &x : theirs) x = canon(x);
}

// bench_ntt runs the NTT rounds at every size: see the file's comment.
static void bench_ntt(perfbot_cuda_ctx *ctx, const Options &o) {
  // sppark's kernels take twiddles from several entries of its table of
  // roots (those of order 2^10, 2^18 and 2^max), so the transform is by
  // forward_roots_of_unity[k] only if each entry squares to the one below.
  bool table_ok = true;
  for (int k = 1; k <= spk::ntt_max_log_n(); k++) table_ok = table_ok && spk_root(k) * spk_root(k) == spk_root(k - 1);
  if (!table_ok) printf("warning: sppark's roots of unity do not square down (forward_roots_of_unity)\n");
  for (int log_n : o.sizes) {
    use_stream(100 + log_n);
    const size_t n = size_t(1) << log_n;
    const HFr w = spk_root(log_n);
    const bool same_root = w == root_of_unity(log_n);
    auto x = rand_vec(n);
    void *d_ours, *d_theirs;
    REQUIRE(perfbot_cuda_alloc(ctx, n * sizeof(HFr), &d_ours, E));
    REQUIRE(perfbot_cuda_copy(ctx, d_ours, x.data(), n * sizeof(HFr), 1, E));
    cuda_check(cudaMalloc(&d_theirs, n * sizeof(HFr)), "cudaMalloc (sppark's NTT)");
    cuda_check(cudaMemcpy(d_theirs, x.data(), n * sizeof(HFr), cudaMemcpyHostToDevice), "cudaMemcpy (sppark's NTT)");
    std::vector<HFr> ours(n), theirs(n);
    std::string err;
    auto check = [&](int round) {
      download_ntt(ctx, d_ours, d_theirs, ours, theirs);
      if (ours == theirs) return;
      size_t j = 0;
      while (ours[j] == theirs[j]) j++;
      size_t bad = 0;
      for (size_t i = 0; i < n; i++) bad += ours[i] != theirs[i];
      bool reversed = true; // sppark's a_j = ours a_{−j}: the other ω convention
      for (size_t i = 0; i < n && reversed; i++) reversed = theirs[i] == ours[(n - i) & (n - 1)];
      printf("MISMATCH ntt n=2^%d %s: %zu of %zu outputs differ, the first at %zu\n", log_n,
             round < 0 ? "warm-up" : ("round " + std::to_string(round + 1)).c_str(), bad, n, j);
      printf("  perfbot a_%zu = %s\n  sppark  a_%zu = %s\n", j, hex_std(ours[j]).c_str(), j, hex_std(theirs[j]).c_str());
      if (reversed) printf("  sppark's output is ours in the order a_{-j}: its forward transform uses omega^-1\n");
      printf("seed %llu: rerun with --seed %llu\n", (unsigned long long)seed, (unsigned long long)seed);
      exit(1);
    };
    // Unrecorded first round (it builds both libraries' twiddle tables),
    // then one output against direct evaluation of the input.
    REQUIRE(perfbot_cuda_ntt(ctx, d_ours, log_n, PERFBOT_NTT_FORWARD, &w, nullptr, PERFBOT_NTT_DEVICE_DATA, nullptr, E));
    spk_check(spk::ntt_forward(d_theirs, log_n, &err), err);
    check(-1);
    {
      size_t j = rng() & (n - 1);
      HFr pt = w.pow_u64(j), acc = HFr::zero(), pw = HFr::one();
      for (size_t i = 0; i < n; i++, pw = pw * pt) acc = acc + x[i] * pw;
      if (acc != ours[j]) {
        printf("MISMATCH ntt n=2^%d warm-up: both libraries' a_%zu differs from direct evaluation\n", log_n, j);
        printf("seed %llu: rerun with --seed %llu\n", (unsigned long long)seed, (unsigned long long)seed);
        exit(1);
      }
    }
    std::vector<double> t_ours, t_theirs;
    for (int r = 0; r < o.reps; r++) {
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      auto t0 = Clock::now();
      REQUIRE(perfbot_cuda_ntt(ctx, d_ours, log_n, PERFBOT_NTT_FORWARD, &w, nullptr, PERFBOT_NTT_DEVICE_DATA, nullptr, E));
      t_ours.push_back(since_ns(t0));
      cuda_check(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
      t0 = Clock::now();
      spk_check(spk::ntt_forward(d_theirs, log_n, &err), err);
      t_theirs.push_back(since_ns(t0));
      check(r);
      print_bench("ntt", log_n, "perfbot", t_ours.back());
      print_bench("ntt", log_n, "sppark", t_theirs.back());
    }
    REQUIRE(perfbot_cuda_free(ctx, d_ours, E));
    cuda_check(cudaFree(d_theirs), "cudaFree (sppark's NTT)");
    print_summary("ntt", log_n, t_ours, t_theirs,
                  std::string("every round's outputs equal, one checked by direct evaluation; omega = sppark's, ") +
                      (same_root ? "which is ours, 7^((r-1)/2^k)" : "which is NOT ours, 7^((r-1)/2^k)"));
  }
}

static const char *kUsage =
    "usage: perfbot_sppark_bench [--sizes 20,22,24] [--reps N] [--seed N] [--only msm|ntt]\n"
    "  --sizes  log2 of the sizes, 10 to 26, comma-separated (default 20,22,24)\n"
    "  --reps   timed rounds a size, after one unrecorded (default 7)\n"
    "  --seed   the inputs' seed (default: drawn, and printed first)\n"
    "  --only   the MSM or the NTT alone (default both)\n";

static void usage_error(const std::string &msg) {
  fprintf(stderr, "perfbot_sppark_bench: %s\n%s", msg.c_str(), kUsage);
  exit(2);
}

// parse_args reads the flags (--flag value or --flag=value).
static Options parse_args(int argc, char **argv, bool *have_seed) {
  Options o;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i], v;
    if (a == "-h" || a == "--help") {
      printf("%s", kUsage);
      exit(0);
    }
    size_t eq = a.find('=');
    if (eq != std::string::npos) {
      v = a.substr(eq + 1);
      a = a.substr(0, eq);
    } else if (i + 1 < argc) {
      v = argv[++i];
    } else {
      usage_error(a + " wants a value");
    }
    uint64_t x;
    if (a == "--sizes") {
      o.sizes.clear();
      for (size_t p = 0; p <= v.size();) {
        size_t c = std::min(v.find(',', p), v.size());
        if (!parse_u64(v.substr(p, c - p), &x) || x < 10 || x > 26)
          usage_error("--sizes wants log2 sizes from 10 to 26, comma-separated, got '" + v + "'");
        o.sizes.push_back((int)x);
        p = c + 1;
      }
      std::sort(o.sizes.begin(), o.sizes.end());
      o.sizes.erase(std::unique(o.sizes.begin(), o.sizes.end()), o.sizes.end());
    } else if (a == "--reps") {
      if (!parse_u64(v, &x) || x < 1 || x > 1000) usage_error("--reps wants a number from 1 to 1000, got '" + v + "'");
      o.reps = (int)x;
    } else if (a == "--seed") {
      if (!parse_u64(v, &seed)) usage_error("--seed wants an unsigned decimal number below 2^64, got '" + v + "'");
      *have_seed = true;
    } else if (a == "--only") {
      if (v != "msm" && v != "ntt") usage_error("--only wants msm or ntt, got '" + v + "'");
      o.msm = v == "msm";
      o.ntt = v == "ntt";
    } else {
      usage_error("unknown flag " + a);
    }
  }
  return o;
}

int main(int argc, char **argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  bool have_seed = false;
  Options o = parse_args(argc, argv, &have_seed);
  if (!have_seed) {
    std::random_device rd;
    seed = (uint64_t)rd() << 32 | rd();
  }
  printf("seed %llu (rerun with --seed %llu)\n", (unsigned long long)seed, (unsigned long long)seed);
  perfbot_cuda_device info;
  REQUIRE(perfbot_cuda_device_info(0, &info, E));
  printf("pkg: github.com/perfbot/perfbot/bench/sppark\n");
  printf("gpu: %s (sm_%d%d, %d SMs, driver %d, runtime %d)\n", info.name, info.major, info.minor,
         info.multiprocessors, info.driver_version, info.runtime_version);
  printf("sppark: %s\n", spk::commit());
  perfbot_cuda_ctx *ctx;
  REQUIRE(perfbot_cuda_open(0, &ctx, E));
  if (o.msm) bench_msm(ctx, o);
  if (o.ntt) bench_ntt(ctx, o);
  perfbot_cuda_close(ctx);
  printf("all results agree\n");
  return 0;
}

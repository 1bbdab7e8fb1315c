// perfbot_cuda.cu — libperfbot_cuda.so: the C ABI of perfbot_cuda.h over
// the kernels of ntt.cuh and msm.cuh. Errors inside are C++ exceptions of
// one type, caught at every exported function and turned into a code and
// a message; nothing else crosses the boundary.
#include <cuda_runtime.h>
#include <cub/device/device_radix_sort.cuh>

#include <algorithm>
#include <chrono>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <new>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "msm.cuh"
#include "ntt.cuh"
#include "perfbot_cuda.h"

namespace pb {

struct Error {
  int code;
  std::string msg;
};

[[noreturn]] static void fail(int code, const char *fmt, ...) {
  char buf[480];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  throw Error{code, buf};
}

static void check(cudaError_t e, const char *what, const char *file, int line) {
  if (e == cudaSuccess) return;
  int code = e == cudaErrorMemoryAllocation ? PERFBOT_CUDA_ERR_MEMORY
             : (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) ? PERFBOT_CUDA_ERR_NO_DEVICE
                                                                             : PERFBOT_CUDA_ERR_CUDA;
  fail(code, "%s: %s (%s at %s:%d)", what, cudaGetErrorString(e), cudaGetErrorName(e), file, line);
}
#define CK(call) ::pb::check((call), #call, __FILE__, __LINE__)
#define CK_LAUNCH(name) ::pb::check(cudaGetLastError(), "launch " name, __FILE__, __LINE__)

// A device buffer that grows on demand and is freed with its owner.
struct DevBuf {
  void *p = nullptr;
  size_t bytes = 0;
  DevBuf() = default;
  DevBuf(const DevBuf &) = delete;
  DevBuf &operator=(const DevBuf &) = delete;
  ~DevBuf() { release(); }
  void release() {
    if (p) cudaFree(p);
    p = nullptr;
    bytes = 0;
  }
  template <class T> T *get(size_t count) {
    size_t need = count * sizeof(T);
    if (need > bytes) {
      release();
      CK(cudaMalloc(&p, std::max<size_t>(need, 256)));
      bytes = std::max<size_t>(need, 256);
    }
    return static_cast<T *>(p);
  }
};

// Timer marks points on a stream with events (device steps) and adds host
// steps measured by the host clock; finish() fills a perfbot_cuda_timings.
struct Timer {
  cudaStream_t stream;
  perfbot_cuda_timings *out;
  std::vector<std::pair<std::string, cudaEvent_t>> marks;
  std::vector<std::pair<std::string, double>> host;
  Timer(cudaStream_t s, perfbot_cuda_timings *o) : stream(s), out(o) {
    if (out) mark("");
  }
  ~Timer() {
    for (auto &m : marks) cudaEventDestroy(m.second);
  }
  void mark(const char *step) {
    if (!out) return;
    cudaEvent_t e;
    CK(cudaEventCreate(&e));
    CK(cudaEventRecord(e, stream));
    marks.emplace_back(step, e);
  }
  void host_step(const char *step, double ms) {
    if (out) host.emplace_back(step, ms);
  }
  void finish() {
    if (!out) return;
    CK(cudaStreamSynchronize(stream));
    out->n = 0;
    auto add = [&](const std::string &name, double ms) {
      if (out->n >= PERFBOT_CUDA_MAX_TIMINGS) return;
      perfbot_cuda_timing &t = out->t[out->n++];
      snprintf(t.name, sizeof t.name, "%s", name.c_str());
      t.ms = ms;
    };
    for (size_t i = 1; i < marks.size(); i++) {
      float ms = 0;
      CK(cudaEventElapsedTime(&ms, marks[i - 1].second, marks[i].second));
      add(marks[i].first, ms);
    }
    for (auto &h : host) add(h.first, h.second);
  }
};

static double since_ms(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// Stager copies large pageable host buffers to and from the device through
// pinned staging buffers. A copy from pageable memory runs at ~8 GB/s
// (measured: 64 ms for 512 MiB of scalars) because the driver stages it
// through its own small pinned buffer with one thread. Pinning the
// caller's buffer instead costs more than it saves (the first seed: 5.7 s
// for 125 GiB), so each of W host threads owns two pinned chunks, fills
// one while the other is on the wire, and the chunks go in parallel.
// The staging buffers are pinned once per context, on first use, and that
// cost is reported as the host step "pin_staging".
struct Stager {
  static constexpr size_t kChunk = 4u << 20;
  static constexpr size_t kMin = 16u << 20; // smaller copies go direct
  struct Worker {
    cudaStream_t s = nullptr;
    void *buf[2] = {nullptr, nullptr};
    cudaEvent_t ev[2] = {nullptr, nullptr};
  };
  int device = 0;
  std::vector<Worker> w;
  bool disabled = false;

  ~Stager() {
    for (auto &x : w) {
      for (int b = 0; b < 2; b++) {
        if (x.buf[b]) cudaFreeHost(x.buf[b]);
        if (x.ev[b]) cudaEventDestroy(x.ev[b]);
      }
      if (x.s) cudaStreamDestroy(x.s);
    }
  }

  void setup(Timer &tm) {
    if (!w.empty()) return;
    auto t0 = std::chrono::steady_clock::now();
    unsigned hc = std::thread::hardware_concurrency();
    int n = (int)std::min(8u, std::max(2u, hc / 2));
    w.resize(n);
    for (auto &x : w) {
      CK(cudaStreamCreateWithFlags(&x.s, cudaStreamNonBlocking));
      for (int b = 0; b < 2; b++) {
        CK(cudaHostAlloc(&x.buf[b], kChunk, cudaHostAllocDefault));
        CK(cudaEventCreateWithFlags(&x.ev[b], cudaEventDisableTiming));
      }
    }
    tm.host_step("pin_staging", since_ms(t0));
  }

  // copy moves bytes between host and device memory after all work queued
  // on stream so far, and returns when the copy is complete.
  void copy(void *dst, const void *src, size_t bytes, bool to_device, cudaStream_t stream, Timer &tm) {
    if (bytes < kMin || disabled) {
      CK(cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost, stream));
      CK(cudaStreamSynchronize(stream));
      return;
    }
    setup(tm);
    cudaEvent_t after;
    CK(cudaEventCreateWithFlags(&after, cudaEventDisableTiming));
    CK(cudaEventRecord(after, stream));
    const size_t chunks = (bytes + kChunk - 1) / kChunk;
    std::vector<std::string> errs(w.size());
    std::vector<std::thread> threads;
    for (size_t id = 0; id < w.size(); id++) {
      threads.emplace_back([&, id] {
        try {
          Worker &x = w[id];
          CK(cudaSetDevice(device));
          CK(cudaStreamWaitEvent(x.s, after, 0));
          char *d = static_cast<char *>(dst);
          const char *sp = static_cast<const char *>(src);
          int b = 0;
          size_t pend_off = 0, pend_len = 0; // device→host: a chunk waiting in buf[1 − b]
          for (size_t j = id; j < chunks; j += w.size(), b ^= 1) {
            size_t off = j * kChunk, len = std::min(kChunk, bytes - off);
            CK(cudaEventSynchronize(x.ev[b])); // buf[b] is free again
            if (to_device) {
              memcpy(x.buf[b], sp + off, len);
              CK(cudaMemcpyAsync(d + off, x.buf[b], len, cudaMemcpyHostToDevice, x.s));
              CK(cudaEventRecord(x.ev[b], x.s));
              continue;
            }
            CK(cudaMemcpyAsync(x.buf[b], sp + off, len, cudaMemcpyDeviceToHost, x.s));
            CK(cudaEventRecord(x.ev[b], x.s));
            if (pend_len) {
              CK(cudaEventSynchronize(x.ev[b ^ 1]));
              memcpy(d + pend_off, x.buf[b ^ 1], pend_len);
            }
            pend_off = off;
            pend_len = len;
          }
          if (pend_len) {
            CK(cudaEventSynchronize(x.ev[b ^ 1]));
            memcpy(d + pend_off, x.buf[b ^ 1], pend_len);
          }
          CK(cudaStreamSynchronize(x.s));
        } catch (const Error &e) {
          errs[id] = e.msg.empty() ? "copy failed" : e.msg;
        } catch (const std::exception &e) {
          errs[id] = e.what();
        }
      });
    }
    for (auto &t : threads) t.join();
    cudaEventDestroy(after);
    for (auto &e : errs)
      if (!e.empty()) fail(PERFBOT_CUDA_ERR_CUDA, "staged copy: %s", e.c_str());
  }
};

static int ceil_log2(uint64_t x) {
  int l = 0;
  while ((1ull << l) < x) l++;
  return l;
}

// Device tables for transforms of one size with one root and coset.
struct NttPlan {
  int log_n = 0;
  DevBuf wlo, whi, ilo, ihi, glo, ghi, gilo, gihi; // ω, ω⁻¹, g, g⁻¹·n⁻¹ powers
  PowTable w, wi, g, gi;
  HFr n_inv;
  DevBuf local[2][13]; // [inverse][k]: the stage-major local roots of a k-stage pass
  DevBuf twist;        // ω^i for i < n (Twist), once a transform needs it
  bool twist_failed = false;

  const DFr *local_roots(int k, bool inverse, cudaStream_t stream) {
    DevBuf &b = local[inverse][k];
    if (!b.p) {
      const uint32_t count = (1u << k) - 1;
      DFr *d = b.get<DFr>(count);
      ntt_local_roots<<<(count + 127) / 128, 128, 0, stream>>>(inverse ? wi : w, log_n, k, d);
      CK_LAUNCH("ntt_local_roots");
    }
    return static_cast<const DFr *>(b.p);
  }

  // twist_table returns ω^i for i < n, built on first use (as much device
  // memory as the data: 512 MiB at 2^24), or null when the device has no
  // room for it; the transform then makes each factor from two PowTable
  // entries instead, correct and slower.
  const DFr *twist_table(cudaStream_t stream) {
    if (!twist.p && !twist_failed) {
      const uint64_t n = 1ull << log_n;
      void *p = nullptr;
      cudaError_t e = cudaMalloc(&p, n * sizeof(DFr));
      if (e == cudaErrorMemoryAllocation) {
        cudaGetLastError(); // clear it: running out here is not an error
        twist_failed = true;
        return nullptr;
      }
      CK(e);
      twist.p = p;
      twist.bytes = n * sizeof(DFr);
      ntt_twist_table<<<(n + 255) / 256, 256, 0, stream>>>(w, n, static_cast<DFr *>(p));
      CK_LAUNCH("ntt_twist_table");
    }
    return static_cast<const DFr *>(twist.p);
  }
};

static void build_pow_table(PowTable &t, DevBuf &lo, DevBuf &hi, const HFr &b, const HFr &factor, int log_n,
                            cudaStream_t stream) {
  t.lb = (log_n + 1) / 2;
  t.hb = log_n - t.lb + 1; // hi covers exponents up to 2^(log_n+1): coset scales index < n
  std::vector<HFr> hl(1u << t.lb), hh(1u << t.hb);
  HFr x = HFr::one();
  for (auto &e : hl) {
    e = x;
    x = x * b;
  }
  HFr step = x; // b^(2^lb)
  x = factor;
  for (auto &e : hh) {
    e = x;
    x = x * step;
  }
  t.lo = lo.get<DFr>(hl.size());
  t.hi = hi.get<DFr>(hh.size());
  CK(cudaMemcpyAsync(t.lo, hl.data(), hl.size() * sizeof(HFr), cudaMemcpyHostToDevice, stream));
  CK(cudaMemcpyAsync(t.hi, hh.data(), hh.size() * sizeof(HFr), cudaMemcpyHostToDevice, stream));
  CK(cudaStreamSynchronize(stream)); // the host vectors die here
}

#ifdef PERFBOT_TEST_HOOKS
// test_spin keeps one thread busy for ns nanoseconds of the device's
// global timer: a planted slowdown inside a device step, for measuring
// what perfbot detects (PERFBOT_TEST_SPIN_MSM; test builds only).
__global__ void test_spin(uint64_t ns) {
  uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
#endif

} // namespace pb

using namespace pb;

// Resident points of one group: DAffine (G1) or DAffine2 (G2) on the
// device; each MSM entry refuses points of the other group.
struct perfbot_cuda_points {
  perfbot_cuda_ctx *ctx;
  void *d = nullptr;
  uint64_t n = 0;
  int group = 1; // 1 or 2
};

struct perfbot_cuda_ctx {
  int device = 0;
  cudaStream_t stream = nullptr;
  std::map<std::string, NttPlan *> plans;
  // MSM scratch
  DevBuf scalars, keys, vals, keys2, vals2, sort_tmp, buckets, first, last, first_key, last_key, parts, windows;
  // NTT scratch
  DevBuf ntt_data, ntt_scratch, qb, qc;
  Stager stage; // large host transfers

  ~perfbot_cuda_ctx() {
    for (auto &p : plans) delete p.second;
    if (stream) cudaStreamDestroy(stream);
  }

  NttPlan *plan(int log_n, const HFr &omega, const HFr *coset) {
    std::string key(reinterpret_cast<const char *>(&omega), sizeof omega);
    key += std::to_string(log_n);
    if (coset) key.append(reinterpret_cast<const char *>(coset), sizeof *coset);
    auto it = plans.find(key);
    if (it != plans.end()) return it->second;
    HFr n_std = HFr::zero();
    n_std.v[0] = 1ull << log_n;
    NttPlan *p = new NttPlan;
    try {
      p->log_n = log_n;
      p->n_inv = hfr_to_mont(n_std).inverse();
      // ω must be a primitive n-th root: ω^(n/2) = −1 (for n ≥ 2).
      HFr half = omega.pow_u64(1ull << (log_n - 1));
      if (half != HFr::one().neg())
        fail(PERFBOT_CUDA_ERR_ARGUMENT, "omega is not a primitive 2^%d-th root of unity", log_n);
      build_pow_table(p->w, p->wlo, p->whi, omega, HFr::one(), log_n, stream);
      build_pow_table(p->wi, p->ilo, p->ihi, omega.inverse(), HFr::one(), log_n, stream);
      if (coset) {
        if (coset->is_zero()) fail(PERFBOT_CUDA_ERR_ARGUMENT, "coset generator is zero");
        build_pow_table(p->g, p->glo, p->ghi, *coset, HFr::one(), log_n, stream);
        build_pow_table(p->gi, p->gilo, p->gihi, coset->inverse(), p->n_inv, log_n, stream);
      }
    } catch (...) {
      delete p;
      throw;
    }
    plans[key] = p;
    return p;
  }

  // NTT kernel settings, from the environment at open (for measuring one
  // against another; the defaults are the fastest measured, cuda/NOTES.md):
  // PERFBOT_NTT_RADIX = 2, 4 or 8 (R = 1, 2, 3 stages a round) and
  // PERFBOT_NTT_TWIST = table or pow (Twist).
  int ntt_round = 2;
  bool ntt_twist_table = true;

  // A test build's planted slowdown (make cuda NVFLAGS+=-DPERFBOT_TEST_HOOKS):
  // PERFBOT_TEST_SPIN_MSM=POINTS:NS adds NS nanoseconds of device time to
  // the accumulate step of every MSM of exactly POINTS points (the H
  // query's 2^k - 1 picks msm_h alone). Other builds have no such code and
  // ignore the variable.
  uint64_t spin_points = 0, spin_ns = 0;

  // ntt_passes: the stages of each pass, split evenly into passes of at
  // most 10 stages (2^10 elements, 32 KiB of shared memory a block).
  static std::vector<int> ntt_passes(int log_n) {
    std::vector<int> ks;
    const int passes = (log_n + 9) / 10;
    for (int i = 0, rest = log_n; i < passes; i++) {
      ks.push_back(rest / (passes - i));
      rest -= ks.back();
    }
    return ks;
  }

  template <int R>
  void ntt_pass(int k, const DFr *in, DFr *out, int log_n, int s, const Twist &tw, const DFr *roots, bool scale_in,
                NttPlan &p, bool last, int mode, const DFr &c) {
    const uint64_t groups = 1ull << (log_n - k);
    const size_t shared = ((size_t)1 << k) * sizeof(DFr);
    ntt_dif_rounds<R><<<groups, 1u << (k - R), shared, stream>>>(in, out, log_n, s, k, tw, roots, scale_in, p.g, last,
                                                                 mode, c, p.gi);
    CK_LAUNCH("ntt_dif_rounds");
  }

  // In-place NTT of device data (scratch: the ctx's ntt_scratch buffer).
  void ntt(DFr *d, int log_n, int direction, NttPlan &p, bool coset, Timer &tm) {
    const bool inverse = direction != PERFBOT_NTT_FORWARD;
    const std::vector<int> ks = ntt_passes(log_n);
    const int passes = (int)ks.size();
    const int mode = inverse ? (coset ? 2 : 1) : 0;
    Twist tw;
    tw.w = inverse ? p.wi : p.w;
    tw.inverse = inverse;
    tw.mask = (1ull << log_n) - 1;
    if (passes > 1 && ntt_twist_table) tw.table = p.twist_table(stream);
    DFr c;
    memcpy(&c, &p.n_inv, sizeof c);
    DFr *scratch = passes > 1 ? ntt_scratch.get<DFr>(1ull << log_n) : d;
    int s = 0;
    for (int i = 0; i < passes; i++) {
      const int k = ks[i];
      const bool scale_in = coset && !inverse && s == 0;
      const bool last = i == passes - 1;
      const DFr *in = i == 0 ? d : scratch;
      DFr *out = last ? d : scratch;
      const DFr *roots = p.local_roots(k, inverse, stream);
      const int R = std::min(ntt_round, k); // a round has at most k stages
      if (R == 3)
        ntt_pass<3>(k, in, out, log_n, s, tw, roots, scale_in, p, last, mode, c);
      else if (R == 2)
        ntt_pass<2>(k, in, out, log_n, s, tw, roots, scale_in, p, last, mode, c);
      else
        ntt_pass<1>(k, in, out, log_n, s, tw, roots, scale_in, p, last, mode, c);
      s += k;
      if (tm.out) {
        char name[32];
        snprintf(name, sizeof name, "pass%d_k%d", i, k);
        tm.mark(name);
      }
    }
  }

  // window_bits: c = log2(n) − 4, from 8 to 20. At 2^24 on the H200,
  // accumulation plus reduction took 141, 139, 138, 133 and 128 ms for
  // c = 16, 17, 18, 19, 20 (cuda/NOTES.md, v3): fewer windows (13 at
  // c = 20 against 15 at 18) outweigh the larger reduction.
  static int window_bits(uint64_t n) {
    int l = ceil_log2(n);
    return std::min(20, std::max(8, l - 4));
  }

  // msm is one MSM over the device points of the group whose device field
  // is DF (DFp for G1, DFp2 for G2) and host field HF (HFp, HFp2): the
  // same kernels and steps for both, instantiated per group.
  template <class DF, class HF>
  void msm(const Affine<DF> *points, const void *host_scalars, uint64_t n, int c, void *out, Timer &tm) {
    typedef XYZZ<DF> DXYZZ;
    static_assert(sizeof(XYZZ<DF>) == sizeof(XYZZ<HF>), "host and device XYZZ agree");
    Jacobian<HF> res;
    if (n == 0) {
      res = XYZZ<HF>::inf().to_jacobian();
      memcpy(out, &res, sizeof res);
      return;
    }
    if (c == 0) c = window_bits(n);
    if (c < 2 || c > 20) fail(PERFBOT_CUDA_ERR_ARGUMENT, "window_bits %d out of range 2..20", c);
    const int nw = 255 / c + 1;
    const uint64_t m = (uint64_t)nw * n;
    if (m > 0x7fffffffull) fail(PERFBOT_CUDA_ERR_ARGUMENT, "msm of %llu points: too many for one call", (unsigned long long)n);
    DFr *ds = scalars.get<DFr>(n);
    stage.copy(ds, host_scalars, n * sizeof(DFr), true, stream, tm);
    tm.mark("upload_scalars");

    uint32_t *k1 = keys.get<uint32_t>(m), *v1 = vals.get<uint32_t>(m);
    uint32_t *k2 = keys2.get<uint32_t>(m), *v2 = vals2.get<uint32_t>(m);
    msm_digits<<<(n + 255) / 256, 256, 0, stream>>>(ds, n, c, nw, k1, v1);
    CK_LAUNCH("msm_digits");
    tm.mark("digits");

    int end_bit = c + ceil_log2(nw);
    size_t tmp_bytes = 0;
    CK(cub::DeviceRadixSort::SortPairs(nullptr, tmp_bytes, k1, k2, v1, v2, (int)m, 0, end_bit, stream));
    void *tmp = sort_tmp.get<char>(tmp_bytes);
    CK(cub::DeviceRadixSort::SortPairs(tmp, tmp_bytes, k1, k2, v1, v2, (int)m, 0, end_bit, stream));
    tm.mark("sort");

    const uint32_t bmask = (1u << c) - 1;
    const uint64_t nb = (uint64_t)nw << c;
    DXYZZ *bk = buckets.get<DXYZZ>(nb);
    CK(cudaMemsetAsync(bk, 0, nb * sizeof(DXYZZ), stream)); // ZZ = 0: infinity
    uint32_t chunk = (uint32_t)std::max<uint64_t>(16, m / (1u << 20));
    uint64_t chunks = (m + chunk - 1) / chunk;
    uint32_t *ka = first_key.get<uint32_t>(2 * chunks), *kb = last_key.get<uint32_t>(2 * chunks);
    DXYZZ *ia = first.get<DXYZZ>(2 * chunks), *ib = last.get<DXYZZ>(2 * chunks);
    bool final = chunks == 1;
    msm_runs<DF, true><<<(chunks + 127) / 128, 128, 0, stream>>>(k2, v2, nullptr, m, chunk, points, bmask, bk, ka, ia,
                                                                 final);
    CK_LAUNCH("msm_runs<points>");
#ifdef PERFBOT_TEST_HOOKS
    if (spin_ns && n == spin_points) {
      test_spin<<<1, 1, 0, stream>>>(spin_ns);
      CK_LAUNCH("test_spin");
    }
#endif
    tm.mark("accumulate");
    for (uint64_t len = 2 * chunks; !final; len = 2 * chunks) {
      // Long levels have work for every SM in chunks of 16; short ones are
      // latency-bound, so shorter chunks (more levels, fewer additions in
      // a row) finish sooner.
      const uint32_t chunk2 = len >= (1u << 20) ? 16 : 4;
      chunks = (len + chunk2 - 1) / chunk2;
      final = chunks == 1;
      msm_runs<DF, false><<<(chunks + 127) / 128, 128, 0, stream>>>(ka, nullptr, ia, len, chunk2, nullptr, bmask, bk,
                                                                    kb, ib, final);
      CK_LAUNCH("msm_runs<sums>");
      std::swap(ka, kb);
      std::swap(ia, ib);
    }
    tm.mark("runs");

    // Segments of 16 buckets (32 additions a thread), fewer for windows
    // too small to fill the device; at most 8192 segments a window.
    const uint32_t nbk = 1u << (c - 1);
    const uint32_t seg_len = std::max<uint32_t>(std::min<uint32_t>(nbk, 16), nbk / 8192);
    const uint32_t segs = nbk / seg_len;
    DXYZZ *pt = parts.get<DXYZZ>(2 * (uint64_t)nw * segs), *pr = pt + (uint64_t)nw * segs;
    msm_reduce_segments<DF><<<((uint64_t)nw * segs + 127) / 128, 128, 0, stream>>>(bk, c, nw, segs, pt, pr);
    CK_LAUNCH("msm_reduce_segments");
    DXYZZ *ws = windows.get<DXYZZ>(nw);
    // 48 KiB of shared memory, one sum a thread: 256 threads of 192-byte
    // G1 sums, 128 of 384-byte G2 sums.
    const uint32_t wt = (48u << 10) / sizeof(DXYZZ);
    static_assert(((48u << 10) / sizeof(DXYZZ) & ((48u << 10) / sizeof(DXYZZ) - 1)) == 0, "a power of two of threads");
    msm_reduce_window<DF><<<nw, wt, wt * sizeof(DXYZZ), stream>>>(pt, pr, segs, seg_len, ws);
    CK_LAUNCH("msm_reduce_window");
    std::vector<XYZZ<HF>> hw(nw);
    CK(cudaMemcpyAsync(hw.data(), ws, nw * sizeof(DXYZZ), cudaMemcpyDeviceToHost, stream));
    tm.mark("reduce");
    CK(cudaStreamSynchronize(stream));

    auto t0 = std::chrono::steady_clock::now();
    XYZZ<HF> acc = hw[nw - 1];
    for (int w = nw - 2; w >= 0; w--) {
      for (int i = 0; i < c; i++) acc = acc.dbl();
      acc = acc.add(hw[w]);
    }
    res = acc.to_jacobian();
    memcpy(out, &res, sizeof res);
    tm.host_step("combine", since_ms(t0));
  }
};

// guard runs f and turns an exception into a code and a message.
template <class F> static int32_t guard(perfbot_cuda_error *err, F f) {
  auto set = [&](int code, const char *msg) {
    if (err) {
      err->code = code;
      snprintf(err->message, sizeof err->message, "%s", msg);
    }
    return (int32_t)code;
  };
  try {
    f();
    return set(PERFBOT_CUDA_OK, "");
  } catch (const Error &e) {
    return set(e.code, e.msg.c_str());
  } catch (const std::bad_alloc &) {
    return set(PERFBOT_CUDA_ERR_MEMORY, "host memory exhausted");
  } catch (const std::exception &e) {
    return set(PERFBOT_CUDA_ERR_INTERNAL, e.what());
  } catch (...) {
    return set(PERFBOT_CUDA_ERR_INTERNAL, "unknown exception");
  }
}

static void need(bool ok, const char *what) {
  if (!ok) fail(PERFBOT_CUDA_ERR_ARGUMENT, "%s", what);
}

// upload copies n affine points of group (1 or 2) to the device.
static perfbot_cuda_points *upload(perfbot_cuda_ctx *ctx, const void *points, uint64_t n, int group) {
  need(points || n == 0, "points is NULL");
  need(n < (1ull << 31), "more than 2^31 points");
  const size_t size = group == 1 ? sizeof(DAffine) : sizeof(DAffine2);
  CK(cudaSetDevice(ctx->device));
  auto *p = new perfbot_cuda_points;
  p->ctx = ctx;
  p->n = n;
  p->group = group;
  cudaError_t e = cudaMalloc(&p->d, std::max<uint64_t>(n, 1) * size);
  if (e != cudaSuccess) {
    delete p;
    CK(e);
  }
  try {
    Timer quiet(ctx->stream, nullptr);
    ctx->stage.copy(p->d, points, n * size, true, ctx->stream, quiet);
  } catch (...) {
    cudaFree(p->d);
    delete p;
    throw;
  }
  return p;
}

static void free_points(perfbot_cuda_points *pts) {
  if (!pts) return;
  cudaSetDevice(pts->ctx->device);
  cudaFree(pts->d);
  delete pts;
}

// check_msm checks an MSM's arguments against resident points of group.
static void check_msm(perfbot_cuda_ctx *ctx, const perfbot_cuda_points *pts, int group, uint64_t offset,
                      const void *scalars, uint64_t n, void *out) {
  need(ctx && pts && out, "ctx, points or out is NULL");
  need(pts->ctx == ctx, "points were uploaded with another context");
  if (pts->group != group)
    fail(PERFBOT_CUDA_ERR_ARGUMENT, "G%d points given to the G%d MSM", pts->group, group);
  need(scalars || n == 0, "scalars is NULL");
  need(offset <= pts->n && n <= pts->n - offset, "offset + n is past the uploaded points");
}

extern "C" {

int32_t perfbot_cuda_abi_version(void) { return PERFBOT_CUDA_ABI_VERSION; }

int32_t perfbot_cuda_device_count(int32_t *count, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(count, "count is NULL");
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver) {
      cudaGetLastError();
      n = 0;
    } else {
      CK(e);
    }
    *count = n;
  });
}

int32_t perfbot_cuda_device_info(int32_t device, perfbot_cuda_device *info, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(info, "info is NULL");
    cudaDeviceProp p;
    CK(cudaGetDeviceProperties(&p, device));
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "%s", p.name);
    const unsigned char *u = reinterpret_cast<const unsigned char *>(p.uuid.bytes);
    snprintf(info->uuid, sizeof info->uuid, "GPU-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14], u[15]);
    info->major = p.major;
    info->minor = p.minor;
    info->multiprocessors = p.multiProcessorCount;
    info->total_memory = p.totalGlobalMem;
    CK(cudaDriverGetVersion(&info->driver_version));
    CK(cudaRuntimeGetVersion(&info->runtime_version));
  });
}

int32_t perfbot_cuda_open(int32_t device, perfbot_cuda_ctx **out, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(out, "ctx is NULL");
    *out = nullptr;
    int n = 0;
    cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess || n == 0) fail(PERFBOT_CUDA_ERR_NO_DEVICE, "no CUDA device: %s", e == cudaSuccess ? "none found" : cudaGetErrorString(e));
    if (device < 0 || device >= n) fail(PERFBOT_CUDA_ERR_ARGUMENT, "device %d: there are %d", device, n);
    CK(cudaSetDevice(device));
    auto *ctx = new perfbot_cuda_ctx;
    ctx->device = device;
    ctx->stage.device = device;
    // PERFBOT_CUDA_STAGING=0 copies straight from pageable memory (to
    // measure what staging saves).
    const char *st = getenv("PERFBOT_CUDA_STAGING");
    ctx->stage.disabled = st && strcmp(st, "0") == 0;
    if (const char *r = getenv("PERFBOT_NTT_RADIX"); r && *r) {
      if (strcmp(r, "2") && strcmp(r, "4") && strcmp(r, "8")) {
        delete ctx;
        fail(PERFBOT_CUDA_ERR_ARGUMENT, "PERFBOT_NTT_RADIX=%s: want 2, 4 or 8 (or unset for the default)", r);
      }
      ctx->ntt_round = r[0] == '2' ? 1 : r[0] == '4' ? 2 : 3;
    }
    if (const char *t = getenv("PERFBOT_NTT_TWIST"); t && *t) {
      if (strcmp(t, "table") && strcmp(t, "pow")) {
        delete ctx;
        fail(PERFBOT_CUDA_ERR_ARGUMENT, "PERFBOT_NTT_TWIST=%s: want table or pow (or unset for the default)", t);
      }
      ctx->ntt_twist_table = strcmp(t, "table") == 0;
    }
#ifdef PERFBOT_TEST_HOOKS
    if (const char *sp = getenv("PERFBOT_TEST_SPIN_MSM"); sp && *sp) {
      unsigned long long pts = 0, ns = 0;
      char tail = 0;
      if (sscanf(sp, "%llu:%llu%c", &pts, &ns, &tail) != 2) {
        delete ctx;
        fail(PERFBOT_CUDA_ERR_ARGUMENT, "PERFBOT_TEST_SPIN_MSM=%s: want POINTS:NS, e.g. 2097151:500000", sp);
      }
      ctx->spin_points = pts;
      ctx->spin_ns = ns;
    }
#endif
    cudaError_t se = cudaStreamCreateWithFlags(&ctx->stream, cudaStreamNonBlocking);
    if (se != cudaSuccess) {
      delete ctx;
      CK(se);
    }
    *out = ctx;
  });
}

void perfbot_cuda_close(perfbot_cuda_ctx *ctx) {
  if (!ctx) return;
  cudaSetDevice(ctx->device);
  delete ctx;
}

int32_t perfbot_cuda_g1_upload(perfbot_cuda_ctx *ctx, const void *points, uint64_t n, perfbot_cuda_points **out,
                               perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && out, "ctx or out is NULL");
    *out = nullptr;
    *out = upload(ctx, points, n, 1);
  });
}

void perfbot_cuda_g1_free(perfbot_cuda_points *pts) { free_points(pts); }

int32_t perfbot_cuda_g2_upload(perfbot_cuda_ctx *ctx, const void *points, uint64_t n, perfbot_cuda_points **out,
                               perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && out, "ctx or out is NULL");
    *out = nullptr;
    *out = upload(ctx, points, n, 2);
  });
}

void perfbot_cuda_g2_free(perfbot_cuda_points *pts) { free_points(pts); }

int32_t perfbot_cuda_msm_g1(perfbot_cuda_ctx *ctx, const perfbot_cuda_points *pts, uint64_t offset,
                            const void *scalars, uint64_t n, int32_t window_bits, void *out,
                            perfbot_cuda_timings *timings, perfbot_cuda_error *err) {
  return guard(err, [&] {
    check_msm(ctx, pts, 1, offset, scalars, n, out);
    CK(cudaSetDevice(ctx->device));
    if (timings) timings->n = 0;
    Timer tm(ctx->stream, timings);
    ctx->msm<DFp, HFp>(static_cast<const DAffine *>(pts->d) + offset, scalars, n, window_bits, out, tm);
    tm.finish();
  });
}

int32_t perfbot_cuda_msm_g2(perfbot_cuda_ctx *ctx, const perfbot_cuda_points *pts, uint64_t offset,
                            const void *scalars, uint64_t n, int32_t window_bits, void *out,
                            perfbot_cuda_timings *timings, perfbot_cuda_error *err) {
  return guard(err, [&] {
    check_msm(ctx, pts, 2, offset, scalars, n, out);
    CK(cudaSetDevice(ctx->device));
    if (timings) timings->n = 0;
    Timer tm(ctx->stream, timings);
    ctx->msm<DFp2, HFp2>(static_cast<const DAffine2 *>(pts->d) + offset, scalars, n, window_bits, out, tm);
    tm.finish();
  });
}

int32_t perfbot_cuda_ntt(perfbot_cuda_ctx *ctx, void *data, int32_t log_n, int32_t direction, const void *omega,
                         const void *coset, int32_t flags, perfbot_cuda_timings *timings, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && data && omega, "ctx, data or omega is NULL");
    need(log_n >= 1 && log_n <= 30, "log_n must be 1..30");
    need(direction == PERFBOT_NTT_FORWARD || direction == PERFBOT_NTT_INVERSE, "direction must be forward or inverse");
    CK(cudaSetDevice(ctx->device));
    if (timings) timings->n = 0;
    Timer tm(ctx->stream, timings);
    HFr w, g;
    memcpy(&w, omega, sizeof w);
    if (coset) memcpy(&g, coset, sizeof g);
    NttPlan *p = ctx->plan(log_n, w, coset ? &g : nullptr);
    tm.mark("plan");
    uint64_t bytes = sizeof(DFr) << log_n;
    DFr *d = static_cast<DFr *>(data);
    bool on_device = flags & PERFBOT_NTT_DEVICE_DATA;
    if (!on_device) {
      d = ctx->ntt_data.get<DFr>(1ull << log_n);
      ctx->stage.copy(d, data, bytes, true, ctx->stream, tm);
      tm.mark("upload");
    }
    ctx->ntt(d, log_n, direction, *p, coset != nullptr, tm);
    if (!on_device) {
      ctx->stage.copy(data, d, bytes, false, ctx->stream, tm);
      tm.mark("download");
    }
    CK(cudaStreamSynchronize(ctx->stream));
    tm.finish();
  });
}

int32_t perfbot_cuda_quotient(perfbot_cuda_ctx *ctx, void *a, const void *b, const void *c, int32_t log_n,
                              const void *omega, const void *coset, perfbot_cuda_timings *timings,
                              perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && a && b && c && omega && coset, "ctx, a, b, c, omega or coset is NULL");
    need(log_n >= 1 && log_n <= 30, "log_n must be 1..30");
    CK(cudaSetDevice(ctx->device));
    if (timings) timings->n = 0;
    Timer tm(ctx->stream, timings);
    HFr w, g;
    memcpy(&w, omega, sizeof w);
    memcpy(&g, coset, sizeof g);
    NttPlan *p = ctx->plan(log_n, w, &g);
    const uint64_t n = 1ull << log_n, bytes = n * sizeof(DFr);
    DFr *da = ctx->ntt_data.get<DFr>(n), *db = ctx->qb.get<DFr>(n), *dc = ctx->qc.get<DFr>(n);
    ctx->stage.copy(da, a, bytes, true, ctx->stream, tm);
    ctx->stage.copy(db, b, bytes, true, ctx->stream, tm);
    ctx->stage.copy(dc, c, bytes, true, ctx->stream, tm);
    tm.mark("upload");
    Timer quiet(ctx->stream, nullptr);
    for (DFr *x : {da, db, dc}) {
      ctx->ntt(x, log_n, PERFBOT_NTT_INVERSE, *p, false, quiet);
      ctx->ntt(x, log_n, PERFBOT_NTT_FORWARD, *p, true, quiet);
    }
    tm.mark("to_coset");
    // Z on the coset: (g·ω^i)^n − 1 = g^n − 1 for every i.
    HFr z = g.pow_u64(n) - HFr::one();
    if (z.is_zero()) fail(PERFBOT_CUDA_ERR_ARGUMENT, "coset generator g has g^n = 1: x^n − 1 vanishes on the coset");
    HFr zi = z.inverse();
    DFr dzi;
    memcpy(&dzi, &zi, sizeof dzi);
    quotient_pointwise<<<(n + 255) / 256, 256, 0, ctx->stream>>>(da, db, dc, n, dzi);
    CK_LAUNCH("quotient_pointwise");
    tm.mark("pointwise");
    ctx->ntt(da, log_n, PERFBOT_NTT_INVERSE, *p, true, quiet);
    tm.mark("from_coset");
    ctx->stage.copy(a, da, bytes, false, ctx->stream, tm);
    tm.mark("download");
    CK(cudaStreamSynchronize(ctx->stream));
    tm.finish();
  });
}

int32_t perfbot_cuda_alloc(perfbot_cuda_ctx *ctx, uint64_t bytes, void **dptr, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && dptr, "ctx or dptr is NULL");
    CK(cudaSetDevice(ctx->device));
    CK(cudaMalloc(dptr, std::max<uint64_t>(bytes, 1)));
  });
}

int32_t perfbot_cuda_free(perfbot_cuda_ctx *ctx, void *dptr, perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx, "ctx is NULL");
    CK(cudaSetDevice(ctx->device));
    CK(cudaFree(dptr));
  });
}

int32_t perfbot_cuda_copy(perfbot_cuda_ctx *ctx, void *dst, const void *src, uint64_t bytes, int32_t to_device,
                          perfbot_cuda_error *err) {
  return guard(err, [&] {
    need(ctx && dst && src, "ctx, dst or src is NULL");
    CK(cudaSetDevice(ctx->device));
    Timer quiet(ctx->stream, nullptr);
    ctx->stage.copy(dst, src, bytes, to_device != 0, ctx->stream, quiet);
  });
}

} // extern "C"

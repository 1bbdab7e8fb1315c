// ctx.cuh — the library's context and what its translation units share
// (internal, not part of the ABI). The library is four translation units,
// compiled side by side by make -j: perfbot_cuda.cu (the C ABI, host
// copies), msm_g1.cu and msm_g2.cu (one MSM instantiation each, the
// longest compiles) and ntt.cu (the transforms and the quotient). Each
// declares here what the others call; kernels stay in the unit that
// launches them.
#pragma once

#include <cuda_runtime.h>

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

#include "curve.cuh"
#include "ntt_tables.cuh"
#include "perfbot_cuda.h"

namespace pb {

struct Error {
  int code;
  std::string msg;
};

[[noreturn]] inline void fail(int code, const char *fmt, ...) {
  char buf[480];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, sizeof buf, fmt, ap);
  va_end(ap);
  throw Error{code, buf};
}

inline void check(cudaError_t e, const char *what, const char *file, int line) {
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

inline double since_ms(std::chrono::steady_clock::time_point t0) {
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

  void setup(Timer &tm);

  // copy moves bytes between host and device memory after all work queued
  // on stream so far, and returns when the copy is complete.
  void copy(void *dst, const void *src, size_t bytes, bool to_device, cudaStream_t stream, Timer &tm);
};

inline int ceil_log2(uint64_t x) {
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

  // local_roots returns the stage-major local roots of a k-stage pass,
  // made on first use (ntt.cu).
  const DFr *local_roots(int k, bool inverse, cudaStream_t stream);

  // twist_table returns ω^i for i < n, built on first use (as much device
  // memory as the data: 512 MiB at 2^24), or null when the device has no
  // room for it; the transform then makes each factor from two PowTable
  // entries instead, correct and slower.
  const DFr *twist_table(cudaStream_t stream);
};

} // namespace pb

// Resident points of one group: DAffine (G1) or DAffine2 (G2) on the
// device; each MSM entry refuses points of the other group.
struct perfbot_cuda_points {
  perfbot_cuda_ctx *ctx;
  void *d = nullptr;
  uint64_t n = 0;
  int group = 1; // 1 or 2
};

struct perfbot_cuda_ctx {
  typedef pb::DevBuf DevBuf;
  typedef pb::Stager Stager;
  typedef pb::NttPlan NttPlan;
  typedef pb::Timer Timer;
  typedef pb::Twist Twist;
  typedef pb::HFr HFr;
  typedef pb::DFr DFr;
  typedef pb::DAffine DAffine;
  typedef pb::DAffine2 DAffine2;

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

  // plan returns the tables of transforms of 2^log_n elements with root
  // omega (and coset generator *coset, if any), made once (ntt.cu).
  NttPlan *plan(int log_n, const HFr &omega, const HFr *coset);

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

  // ntt is an in-place NTT of device data (scratch: ntt_scratch; ntt.cu).
  void ntt(DFr *d, int log_n, int direction, NttPlan &p, bool coset, Timer &tm);

  // quotient computes Groth16's h = (a·b − c)/Z on the coset of plan p, in
  // place in a: the three to the coset, pointwise, back (ntt.cu). The
  // device data a, b and c are overwritten.
  void quotient(DFr *a, DFr *b, DFr *c, int log_n, NttPlan &p, const HFr &g, Timer &tm);

  // One MSM over resident G1 (msm_g1.cu) or G2 (msm_g2.cu) points, the
  // result a Jacobian point in gnark-crypto's layout in out.
  void msm_g1(const DAffine *points, const void *host_scalars, uint64_t n, int c, void *out, Timer &tm);
  void msm_g2(const DAffine2 *points, const void *host_scalars, uint64_t n, int c, void *out, Timer &tm);

private:
  // msm is one MSM over the device points of the group whose device field
  // is DF (DFp for G1, DFp2 for G2) and host field HF (HFp, HFp2): the
  // same kernels and steps for both (msm_run.cuh), instantiated once per
  // group in its own translation unit.
  template <class DF, class HF>
  void msm(const pb::Affine<DF> *points, const void *host_scalars, uint64_t n, int c, void *out, Timer &tm);

  template <int R>
  void ntt_pass(int k, const DFr *in, DFr *out, int log_n, int s, const Twist &tw, const DFr *roots, bool scale_in,
                NttPlan &p, bool last, int mode, const DFr &c);
};

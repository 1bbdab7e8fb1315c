// msm_run.cuh — perfbot_cuda_ctx::msm, the MSM's steps over either group,
// for msm_g1.cu and msm_g2.cu, which instantiate it once each (the
// kernels of the two groups then compile side by side).
#pragma once

#include <cub/device/device_radix_sort.cuh>

#include "ctx.cuh"
#include "msm.cuh"

namespace pb {

// window_bits: c = log2(n) − 4, from 8 to 20. At 2^24 on the H200,
// accumulation plus reduction took 141, 139, 138, 133 and 128 ms for
// c = 16, 17, 18, 19, 20 (cuda/NOTES.md, v3): fewer windows (13 at
// c = 20 against 15 at 18) outweigh the larger reduction.
static int window_bits(uint64_t n) {
  int l = ceil_log2(n);
  return std::min(20, std::max(8, l - 4));
}

#ifdef PERFBOT_TEST_HOOKS
// test_spin keeps one thread busy for ns nanoseconds of the device's
// global timer: a planted slowdown inside a device step, for measuring
// what perfbot detects (PERFBOT_TEST_SPIN_MSM; test builds only).
static __global__ void test_spin(uint64_t ns) {
  uint64_t t0, t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
  do {
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  } while (t - t0 < ns);
}
#endif

} // namespace pb

using namespace pb;

template <class DF, class HF>
void perfbot_cuda_ctx::msm(const Affine<DF> *points, const void *host_scalars, uint64_t n, int c, void *out, Timer &tm) {
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

// ntt.cuh — number-theoretic transforms over Fr on the device.
//
// A radix-2 decimation-in-frequency transform of n = 2^L elements is done
// in passes of k ≤ 10 stages. A pass that starts after s stages works on
// groups of 2^k elements with stride n >> (s + k), one group per thread
// block in shared memory:
//
//   1. load the group (the first pass may scale x_i by g^i: a coset);
//   2. a local DIF of size 2^k with the 2^k-th root of unity;
//   3. multiply the element at local position m by ω^((lo·rev_k(m)) << s),
//      lo being the group's column (the four-step "twist").
//
// This is exactly radix-2 DIF regrouped, so the output is in bit-reversed
// order; the last pass writes each element straight to its natural index
// (out of place) and applies any final scale (n⁻¹ for the inverse,
// g^−i n⁻¹ for the inverse on a coset). With two passes or more the first
// reads the data and writes a scratch buffer, and the last writes back.
// Powers b^e for e < n come from two tables, b^e = hi[e >> lb]·lo[e & mask],
// so no table of n elements is ever built.
#pragma once

#include "field.cuh"
#include "ntt_r8.cuh"

namespace pb {

// PowTable holds b^i for i < 2^lb (lo) and f·b^(j·2^lb) for j < 2^hb (hi),
// f being an optional factor folded into every power.
// ldg reads an element as two 16-byte loads through the read-only path.
__device__ __forceinline__ DFr ldg(const DFr *p) {
  DFr r;
  const uint4 *s = reinterpret_cast<const uint4 *>(p);
  uint4 *d = reinterpret_cast<uint4 *>(&r);
  d[0] = __ldg(s);
  d[1] = __ldg(s + 1);
  return r;
}

struct PowTable {
  DFr *lo = nullptr, *hi = nullptr;
  int lb = 0, hb = 0;
  __device__ __forceinline__ DFr get(uint64_t e) const {
    return ldg(hi + (e >> lb)) * ldg(lo + (e & ((1ull << lb) - 1)));
  }
};

__device__ __forceinline__ uint32_t bit_rev(uint32_t x, int bits) {
  return bits == 0 ? 0 : __brev(x) >> (32 - bits);
}

// Shared memory holds elements as two arrays of 16-byte halves: element i
// is (lo[i], hi[i]) with hi = lo + size. A warp's 16-byte accesses to
// consecutive elements then touch consecutive addresses, so they run
// without bank conflicts; a whole 32-byte element per thread would
// conflict, and one 4-byte word at a time (eight accesses) conflicts
// eight ways: v2's passes were bound by that, not by the products.
__device__ __forceinline__ DFr lds(const uint4 *x, uint32_t i, uint32_t size) {
  DFr r;
  uint4 *p = reinterpret_cast<uint4 *>(&r);
  p[0] = x[i];
  p[1] = x[i + size];
  return r;
}
__device__ __forceinline__ void sts(uint4 *x, uint32_t i, uint32_t size, const DFr &v) {
  const uint4 *p = reinterpret_cast<const uint4 *>(&v);
  x[i] = p[0];
  x[i + size] = p[1];
}

// pass_store writes the element at group position m once a pass is done:
// a middle pass twists it and stores it in place (at its column, stride
// L = 2^log_l); the last pass writes it at its natural index, scaled as
// mode says (see ntt_dif_pass).
__device__ __forceinline__ void pass_store(DFr v, uint32_t m, uint64_t base, int log_l, uint64_t lo, int s, int k,
                                           int log_n, const PowTable &w, bool last, int mode, const DFr &c,
                                           const PowTable &t, DFr *out) {
  uint64_t idx = base + ((uint64_t)m << log_l);
  if (!last) {
    if (lo != 0) v = v * w.get((lo * bit_rev(m, k)) << s);
    out[idx] = v;
    return;
  }
  uint64_t j = bit_rev((uint32_t)idx, log_n);
  if (mode == 1)
    v = v * c;
  else if (mode == 2)
    v = v * t.get(j);
  out[j] = v;
}

// One DIF pass; see the file comment. blockDim.x = 2^(k−1); shared memory
// holds the group (2^k elements) and the local roots (2^(k−1)), in halves
// (lds, sts). Groups are disjoint, so in may equal out, except in the last
// pass (last = true): it writes each output at its bit-reversed, natural,
// index, scattered over the whole array, with the final scale of the
// element landing at natural index j: none (mode 0), c (mode 1) or
// t.get(j) (mode 2).
__global__ void ntt_dif_pass(const DFr *in, DFr *out, int log_n, int s, int k, PowTable w, const DFr *local_roots,
                             bool coset_in, PowTable g, bool last, int mode, DFr c, PowTable t) {
  extern __shared__ uint4 smem[];
  const uint32_t size = 1u << k;
  const uint32_t tid = threadIdx.x;
  const uint32_t half = size >> 1;
  uint4 *x = smem;                // 2·size halves
  uint4 *roots = smem + 2 * size; // 2·half halves
  const int log_l = log_n - s - k; // log of the column stride L
  const uint64_t L = 1ull << log_l;
  const uint64_t group = blockIdx.x;
  const uint64_t hi = group >> log_l, lo = group & (L - 1);
  const uint64_t base = (hi << (log_n - s)) + lo;

  // Local roots ω_k^j = ω^(j·n/2^k), j < 2^(k−1), from the plan's table.
  sts(roots, tid, half, ldg(local_roots + tid));
#pragma unroll
  for (int r = 0; r < 2; r++) {
    uint32_t m = tid + r * half;
    uint64_t idx = base + ((uint64_t)m << log_l);
    DFr v = in[idx];
    if (coset_in) v = v * g.get(idx);
    sts(x, m, size, v);
  }
  __syncthreads();

  for (int st = 0; st < k; st++) {
    uint32_t h = half >> st;
    uint32_t jj = tid & (h - 1);
    uint32_t i0 = ((tid >> (k - 1 - st)) << (k - st)) + jj;
    uint32_t i1 = i0 + h;
    DFr u = lds(x, i0, size), v = lds(x, i1, size);
    sts(x, i0, size, u + v);
    DFr d = u - v;
    sts(x, i1, size, jj == 0 ? d : d * lds(roots, jj << st, half));
    __syncthreads();
  }

#pragma unroll
  for (int r = 0; r < 2; r++) {
    uint32_t m = tid + r * half;
    DFr v = lds(x, m, size);
    pass_store(v, m, base, log_l, lo, s, k, log_n, w, last, mode, c, t, out);
  }
}

// ntt_dif_pass8 is ntt_dif_pass for k a multiple of 3 (12 in use): a
// block of 2^(k−3) threads, eight elements each, does the stages three at
// a time in registers (dif_r8), so a 12-stage pass has four
// __syncthreads and a quarter of the shared-memory traffic of twelve
// radix-2 stages, and a transform of 2^24 takes two passes instead of
// three. The local roots are read from the plan's table through the
// read-only cache; shared memory holds only the group (128 KiB at k = 12).
__global__ void __launch_bounds__(512, 1)
    ntt_dif_pass8(const DFr *in, DFr *out, int log_n, int s, int k, PowTable w, const DFr *local_roots,
                  bool coset_in, PowTable g, bool last, int mode, DFr c, PowTable t) {
  extern __shared__ uint4 smem[];
  const uint32_t size = 1u << k;
  const uint32_t tid = threadIdx.x, nt = blockDim.x;
  uint4 *x = smem; // 2·size halves
  const int log_l = log_n - s - k;
  const uint64_t L = 1ull << log_l;
  const uint64_t group = blockIdx.x;
  const uint64_t hi = group >> log_l, lo = group & (L - 1);
  const uint64_t base = (hi << (log_n - s)) + lo;

#pragma unroll
  for (int r = 0; r < 8; r++) {
    uint32_t m = tid + r * nt;
    uint64_t idx = base + ((uint64_t)m << log_l);
    DFr v = ldg(in + idx);
    if (coset_in) v = v * g.get(idx);
    sts(x, m, size, v);
  }
  __syncthreads();

  auto root = [local_roots](uint32_t i) { return ldg(local_roots + i); };
  for (int st = 0; st < k; st += 3) {
    const uint32_t H = size >> (st + 3);
    const uint32_t r = tid & (H - 1), b = ((tid / H) * 8 * H) + r;
    DFr e[8];
#pragma unroll
    for (int m = 0; m < 8; m++) e[m] = lds(x, b + m * H, size);
    dif_r8(e, r, H, st, root);
#pragma unroll
    for (int m = 0; m < 8; m++) sts(x, b + m * H, size, e[m]);
    __syncthreads();
  }

#pragma unroll
  for (int r = 0; r < 8; r++) {
    uint32_t m = tid + r * nt;
    DFr v = lds(x, m, size);
    pass_store(v, m, base, log_l, lo, s, k, log_n, w, last, mode, c, t, out);
  }
}

// out[j] = ω^(j·n/2^k) for j < 2^(k−1): the local roots of a k-stage pass,
// made once per plan rather than by every block of every pass.
__global__ void ntt_local_roots(PowTable w, int log_n, int k, DFr *out) {
  uint32_t j = blockIdx.x * blockDim.x + threadIdx.x;
  if (j < (1u << (k - 1))) out[j] = w.get((uint64_t)j << (log_n - k));
}

// h = (a·b − c)·z⁻¹ pointwise, into a.
__global__ void quotient_pointwise(DFr *a, const DFr *b, const DFr *c, uint64_t n, DFr zinv) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = (a[i] * b[i] - c[i]) * zinv;
}

} // namespace pb

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
// Powers b^e for e < n come from two tables, b^e = hi[e >> lb]·lo[e & mask]
// (PowTable), except the twist factors, which come from one table of ω^i,
// i < n, when the plan has it (Twist): the twist is most of a middle
// pass's products otherwise. The local DIF runs R stages a round in
// registers (ntt_round.cuh), R = 1, 2 or 3 (radix 2, 4 or 8).
#pragma once

#include "field.cuh"
#include "ntt_round.cuh"
#include "ntt_tables.cuh"

namespace pb {

// The pass kernel's code is kept small, which measured 3% faster at 2^24
// than unrolling everything (cuda/NOTES.md, v5): its load and store loops
// are not unrolled, and the PowTable products (coset scales, the twist
// without a table) are one out-of-line function (ntt_tables.cuh) rather
// than a copy at every use.

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
// mode says (see ntt_dif_rounds).
__device__ __forceinline__ void pass_store(DFr v, uint32_t m, uint64_t base, int log_l, uint64_t lo, int s, int k,
                                           int log_n, const Twist &w, bool last, int mode, const DFr &c,
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

// smem_round runs dif_round<R> for unit u of a round that starts at stage
// st: the unit's 2^R elements are at b + m·H, H = 2^(k−st−R).
template <int R>
__device__ __forceinline__ void smem_round(uint4 *x, uint32_t size, int st, uint32_t u, const DFr *roots) {
  const uint32_t H = size >> (st + R), r = u & (H - 1), b = ((u - r) << R) + r;
  DFr e[1 << R];
#pragma unroll
  for (int m = 0; m < (1 << R); m++) e[m] = lds(x, swz(b + m * H), size);
  // roots holds the pass's stages one after another: ω_{2h}^j at size − 2h + j
  dif_round<R>(e, r, H, [roots, size](uint32_t h, uint32_t j) { return ldg(roots + size - 2 * h + j); });
#pragma unroll
  for (int m = 0; m < (1 << R); m++) sts(x, swz(b + m * H), size, e[m]);
}

// One DIF pass of k stages; see the file comment. A block of 2^(k−R)
// threads holds the group (2^k elements) in shared memory, in halves at
// swizzled positions (lds, sts, swz), and runs the stages R at a time in
// registers (dif_round), one __syncthreads a round; a remainder of k mod R
// stages runs as smaller rounds. roots is the plan's stage-major table
// of local roots for k (NttPlan::local_roots). Groups are disjoint, so in
// may equal out, except in the last pass (last = true): it writes each
// output at its bit-reversed, natural, index, scattered over the whole
// array, with the final scale of the element landing at natural index j:
// none (mode 0), c (mode 1) or t.get(j) (mode 2).
template <int R>
__global__ void ntt_dif_rounds(const DFr *in, DFr *out, int log_n, int s, int k, Twist w, const DFr *roots,
                               bool coset_in, PowTable g, bool last, int mode, DFr c, PowTable t) {
  extern __shared__ uint4 smem[];
  constexpr int E = 1 << R; // elements a thread holds
  const uint32_t size = 1u << k, nt = size >> R, tid = threadIdx.x;
  const int log_l = log_n - s - k; // log of the column stride L
  const uint64_t L = 1ull << log_l;
  const uint64_t group = blockIdx.x;
  const uint64_t hi = group >> log_l, lo = group & (L - 1);
  const uint64_t base = (hi << (log_n - s)) + lo;

  // The twist factors are read after the rounds: ask L2 for them now.
  if (!last && lo != 0 && w.table) {
#pragma unroll
    for (int q = 0; q < E; q++) {
      const uint32_t m = tid + q * nt;
      asm volatile("prefetch.global.L2 [%0];" ::"l"(w.at((lo * bit_rev(m, k)) << s)));
    }
  }
#pragma unroll 1
  for (int q = 0; q < E; q++) {
    const uint32_t m = tid + q * nt;
    const uint64_t idx = base + ((uint64_t)m << log_l);
    DFr v = ldg(in + idx);
    if (coset_in) v = v * g.get(idx);
    sts(smem, swz(m), size, v);
  }
  __syncthreads();

  int st = 0;
  for (; st + R <= k; st += R) {
    smem_round<R>(smem, size, st, tid, roots);
    __syncthreads();
  }
  if constexpr (R >= 2) { // k mod R stages left: 2^(R−rem) smaller units a thread
    if (k - st == 1) {
#pragma unroll
      for (int q = 0; q < E / 2; q++) smem_round<1>(smem, size, st, tid + q * nt, roots);
      __syncthreads();
    }
  }
  if constexpr (R == 3) {
    if (k - st == 2) {
#pragma unroll
      for (int q = 0; q < 2; q++) smem_round<2>(smem, size, st, tid + q * nt, roots);
      __syncthreads();
    }
  }

#pragma unroll 1
  for (int q = 0; q < E; q++) {
    const uint32_t m = tid + q * nt;
    pass_store(lds(smem, swz(m), size), m, base, log_l, lo, s, k, log_n, w, last, mode, c, t, out);
  }
}

// ntt_local_roots fills the stage-major table of a k-stage pass: stage t
// (half size h = 2^(k−1−t)) has ω_{2h}^j = ω^(j·n/2h) for j < h at
// 2^k − 2h + j, so a stage's threads read consecutive entries. 2^k − 1
// entries; made once per plan rather than by every block of every pass.
static __global__ void ntt_local_roots(PowTable w, int log_n, int k, DFr *out) {
  const uint32_t size = 1u << k;
  const uint32_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= size - 1) return;
  uint32_t h = size >> 1; // find i's stage: entries [size − 2h, size − h) have half size h
  while (i >= size - h) h >>= 1;
  const uint32_t j = i - (size - 2 * h);
  const int log_h = __ffs(h) - 1;
  out[i] = w.get((uint64_t)j << (log_n - 1 - log_h)); // ω_{2h}^j
}

// out[i] = ω^i for i < n: the twist table (Twist).
static __global__ void ntt_twist_table(PowTable w, uint64_t n, DFr *out) {
  const uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = w.get(i);
}

// h = (a·b − c)·z⁻¹ pointwise, into a.
static __global__ void quotient_pointwise(DFr *a, const DFr *b, const DFr *c, uint64_t n, DFr zinv) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = (a[i] * b[i] - c[i]) * zinv;
}

} // namespace pb

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
// order; a last in-place pass swaps it into natural order and applies any
// final scale (n⁻¹ for the inverse, g^−i n⁻¹ for the inverse on a coset).
// Powers b^e for e < n come from two tables, b^e = hi[e >> lb]·lo[e & mask],
// so no table of n elements is ever built.
#pragma once

#include "field.cuh"

namespace pb {

// PowTable holds b^i for i < 2^lb (lo) and f·b^(j·2^lb) for j < 2^hb (hi),
// f being an optional factor folded into every power.
struct PowTable {
  DFr *lo = nullptr, *hi = nullptr;
  int lb = 0, hb = 0;
  __device__ __forceinline__ DFr get(uint64_t e) const {
    return hi[e >> lb] * lo[e & ((1ull << lb) - 1)];
  }
};

__device__ __forceinline__ uint32_t bit_rev(uint32_t x, int bits) {
  return bits == 0 ? 0 : __brev(x) >> (32 - bits);
}

// One DIF pass; see the file comment. blockDim.x = 2^(k−1); shared memory
// holds the group (2^k elements) and the local roots (2^(k−1)).
__global__ void ntt_dif_pass(DFr *a, int log_n, int s, int k, PowTable w, bool coset_in,
                             PowTable g) {
  extern __shared__ DFr smem[];
  DFr *x = smem;
  DFr *roots = smem + (1 << k);
  const uint32_t tid = threadIdx.x;
  const uint32_t half = 1u << (k - 1);
  const int log_l = log_n - s - k; // log of the column stride L
  const uint64_t L = 1ull << log_l;
  const uint64_t group = blockIdx.x;
  const uint64_t hi = group >> log_l, lo = group & (L - 1);
  const uint64_t base = (hi << (log_n - s)) + lo;

  // Local roots: ω_k^j = ω^(j·n/2^k) for j < 2^(k−1).
  roots[tid] = w.get((uint64_t)tid << (log_n - k));
#pragma unroll
  for (int r = 0; r < 2; r++) {
    uint32_t m = tid + r * half;
    uint64_t idx = base + ((uint64_t)m << log_l);
    DFr v = a[idx];
    if (coset_in) v = v * g.get(idx);
    x[m] = v;
  }
  __syncthreads();

  for (int t = 0; t < k; t++) {
    uint32_t h = half >> t;
    uint32_t jj = tid & (h - 1);
    uint32_t i0 = ((tid >> (k - 1 - t)) << (k - t)) + jj;
    uint32_t i1 = i0 + h;
    DFr u = x[i0], v = x[i1];
    x[i0] = u + v;
    DFr d = u - v;
    x[i1] = jj == 0 ? d : d * roots[jj << t];
    __syncthreads();
  }

#pragma unroll
  for (int r = 0; r < 2; r++) {
    uint32_t m = tid + r * half;
    DFr v = x[m];
    if (lo != 0) v = v * w.get((lo * bit_rev(m, k)) << s);
    a[base + ((uint64_t)m << log_l)] = v;
  }
}

// In-place bit reversal with an optional scale of the element that lands
// at natural index i: none (mode 0), a constant (mode 1), or a table power
// t.get(i) (mode 2, the table carrying its own constant factor).
__global__ void ntt_bit_reverse(DFr *a, int log_n, int mode, DFr c, PowTable t) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >> log_n) return;
  uint64_t j = bit_rev((uint32_t)i, log_n);
  if (i > j) return;
  DFr ai = a[i], aj = a[j];
  if (mode == 1) {
    ai = ai * c;
    aj = aj * c;
  } else if (mode == 2) {
    ai = ai * t.get(j); // a[i] moves to j
    aj = aj * t.get(i);
  }
  a[j] = ai;
  a[i] = aj;
}

// h = (a·b − c)·z⁻¹ pointwise, into a.
__global__ void quotient_pointwise(DFr *a, const DFr *b, const DFr *c, uint64_t n, DFr zinv) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = (a[i] * b[i] - c[i]) * zinv;
}

} // namespace pb

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
// holds the group (2^k elements) and the local roots (2^(k−1)). Groups are
// disjoint, so in may equal out, except in the last pass (last = true):
// it writes each output at its bit-reversed, natural, index, scattered
// over the whole array, with the final scale of the element landing at
// natural index j: none (mode 0), c (mode 1) or t.get(j) (mode 2).
__global__ void ntt_dif_pass(const DFr *in, DFr *out, int log_n, int s, int k, PowTable w, bool coset_in,
                             PowTable g, bool last, int mode, DFr c, PowTable t) {
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
    DFr v = in[idx];
    if (coset_in) v = v * g.get(idx);
    x[m] = v;
  }
  __syncthreads();

  for (int st = 0; st < k; st++) {
    uint32_t h = half >> st;
    uint32_t jj = tid & (h - 1);
    uint32_t i0 = ((tid >> (k - 1 - st)) << (k - st)) + jj;
    uint32_t i1 = i0 + h;
    DFr u = x[i0], v = x[i1];
    x[i0] = u + v;
    DFr d = u - v;
    x[i1] = jj == 0 ? d : d * roots[jj << st];
    __syncthreads();
  }

#pragma unroll
  for (int r = 0; r < 2; r++) {
    uint32_t m = tid + r * half;
    DFr v = x[m];
    uint64_t idx = base + ((uint64_t)m << log_l);
    if (!last) {
      if (lo != 0) v = v * w.get((lo * bit_rev(m, k)) << s);
      out[idx] = v;
      continue;
    }
    uint64_t j = bit_rev((uint32_t)idx, log_n);
    if (mode == 1)
      v = v * c;
    else if (mode == 2)
      v = v * t.get(j);
    out[j] = v;
  }
}

// h = (a·b − c)·z⁻¹ pointwise, into a.
__global__ void quotient_pointwise(DFr *a, const DFr *b, const DFr *c, uint64_t n, DFr zinv) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  a[i] = (a[i] * b[i] - c[i]) * zinv;
}

} // namespace pb

// msm.cuh — Pippenger's multi-scalar multiplication on G1, on the device.
//
// For a window of c bits, each scalar is cut into nw = ⌊255/c⌋ + 1 signed
// digits in (−2^(c−1), 2^(c−1)], so a window has 2^(c−1) buckets and a
// negative digit adds the negated point. Steps:
//
//   digits      one thread per scalar: Montgomery → standard form, then a
//               (key, value) pair per window: key = window·2^c + |digit|,
//               value = point index with the digit's sign in the top bit.
//   sort        CUB's radix sort of the pairs by key: each bucket's points
//               become one run.
//   accumulate  the sorted pairs cut into equal chunks, one thread each,
//               adding affine points into XYZZ sums; runs that cross a
//               chunk's edge are finished level by level (msm_runs), so
//               a bucket holding every point (all scalars equal, or the
//               top window's few buckets) costs O(log n) levels.
//   reduce      Σ b·S_b per window by running sums over segments of the
//               buckets, in parallel; then one block per window adds its
//               segments.
//   combine     on the host: Σ 2^(c·w)·W_w by Horner's rule (nw small).
#pragma once

#include "curve.cuh"

namespace pb {

typedef Affine<DFp> DAffine;
typedef XYZZ<DFp> DXYZZ;

__device__ __forceinline__ uint32_t scalar_bits(const DFr &s, int off, int c) {
  int limb = off >> 5, sh = off & 31;
  if (limb >= 8) return 0;
  uint64_t w = s.v[limb];
  if (limb + 1 < 8) w |= (uint64_t)s.v[limb + 1] << 32;
  return (uint32_t)(w >> sh) & ((1u << c) - 1);
}

__global__ void msm_digits(const DFr *scalars, uint64_t n, int c, int nw, uint32_t *keys,
                           uint32_t *vals) {
  uint64_t i = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  DFr s = scalars[i].from_mont();
  uint32_t carry = 0;
  const uint32_t half = 1u << (c - 1);
  for (int w = 0; w < nw; w++) {
    uint32_t d = scalar_bits(s, w * c, c) + carry;
    uint32_t sign = 0;
    if (d > half) {
      d = (1u << c) - d;
      sign = 1;
      carry = 1;
    } else {
      carry = 0;
    }
    keys[(uint64_t)w * n + i] = ((uint32_t)w << c) | d;
    vals[(uint64_t)w * n + i] = (uint32_t)i | (sign << 31);
  }
}

__device__ __forceinline__ DAffine load_point(const DAffine *points, uint32_t v) {
  DAffine p = points[v & 0x7fffffffu];
  if (v >> 31) p.y = p.y.neg();
  return p;
}

// Runs of equal keys are summed level by level. At each level the sorted
// sequence is cut into chunks, one thread each. A run that begins and ends
// inside a chunk is a finished bucket and is written. A chunk's first and
// last runs may continue into its neighbours, so they are passed on as two
// items (key, partial sum) of the next level's sequence, which is sorted
// too and about chunk/2 times shorter. The level with one chunk writes
// everything. Level 0 reads (key, signed point index) pairs and adds
// affine points; later levels read (key, XYZZ) items. A bucket holding
// every point costs O(log n) levels, not a chain of n additions.
template <bool Points>
__global__ void msm_runs(const uint32_t *keys, const uint32_t *vals, const DXYZZ *items, uint64_t len,
                         uint32_t chunk, const DAffine *points, uint32_t bmask, DXYZZ *buckets,
                         uint32_t *out_keys, DXYZZ *out_items, bool final) {
  uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t begin = t * chunk;
  if (begin >= len) return;
  uint64_t end = min(begin + chunk, len);
  uint32_t k = keys[begin];
  DXYZZ acc = DXYZZ::inf();
  bool in_first = true;
  for (uint64_t j = begin; j < end; j++) {
    uint32_t kj = keys[j];
    if (kj != k) {
      if (in_first && !final) {
        out_keys[2 * t] = k;
        out_items[2 * t] = acc;
      } else if (k & bmask) {
        buckets[k] = acc;
      }
      in_first = false;
      acc = DXYZZ::inf();
      k = kj;
    }
    if (kj & bmask) {
      if (Points)
        acc = acc.add_affine(load_point(points, vals[j]));
      else
        acc = acc.add(items[j]);
    }
  }
  if (final) {
    if (k & bmask) buckets[k] = acc;
    return;
  }
  if (in_first) { // one run fills the chunk: it is both first and last
    out_keys[2 * t] = k;
    out_items[2 * t] = acc;
    acc = DXYZZ::inf();
  }
  out_keys[2 * t + 1] = k;
  out_items[2 * t + 1] = acc;
}

// Thread (w, seg): Σ b·S_b over buckets b in (seg·len, (seg+1)·len] of
// window w, by running sums from the top: Σ (b − lo + 1)·S_b + (lo − 1)·Σ S_b.
__global__ void msm_reduce_segments(const DXYZZ *buckets, int c, int nw, uint32_t segs, DXYZZ *out) {
  uint64_t id = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= (uint64_t)nw * segs) return;
  uint32_t w = id / segs, seg = id % segs;
  uint32_t len = (1u << (c - 1)) / segs;
  uint32_t lo = seg * len + 1, hi = (seg + 1) * len;
  const DXYZZ *b = buckets + ((uint64_t)w << c);
  DXYZZ running = DXYZZ::inf(), sum = DXYZZ::inf();
  for (uint32_t i = hi; i >= lo; i--) {
    running = running.add(b[i]);
    sum = sum.add(running);
  }
  if (lo > 1) sum = sum.add(running.mul_small(lo - 1));
  out[id] = sum;
}

// One block per window: the window's segment sums, added in a tree.
__global__ void msm_reduce_window(const DXYZZ *parts, uint32_t segs, DXYZZ *out) {
  extern __shared__ DXYZZ acc[];
  const DXYZZ *p = parts + (uint64_t)blockIdx.x * segs;
  DXYZZ s = DXYZZ::inf();
  for (uint32_t i = threadIdx.x; i < segs; i += blockDim.x) s = s.add(p[i]);
  acc[threadIdx.x] = s;
  __syncthreads();
  for (uint32_t h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) acc[threadIdx.x] = acc[threadIdx.x].add(acc[threadIdx.x + h]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = acc[0];
}

} // namespace pb

// msm.cuh — Pippenger's multi-scalar multiplication on the device, for G1
// and G2: the kernels that touch points are templates over the point's
// field F (DFp for G1, DFp2 for G2), instantiated once for each; the
// digits and the sort see only scalars and are shared.
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

// The reduction kernels add and double through ReduceOps. For G1 these
// are the point formulas inlined, as before. For G2 they are calls:
// inlined, each of the reduction kernels' ~8 additions and doublings
// (every addition carries a doubling for P = Q) is a copy of Fp2 code
// three times G1's size at 255 registers, and ptxas took minutes over
// them (CUDA 13.0 did not finish `make cuda` in 210 s; cuda/NOTES.md v7).
// One out-of-line copy each compiles in seconds; the reduction is ~13%
// of a G2 MSM and runs once per window, so the calls cost little there.
// The accumulation (msm_runs), where the time goes, stays inline.
template <class F> struct ReduceOps {
  static __device__ __forceinline__ XYZZ<F> add(const XYZZ<F> &a, const XYZZ<F> &b) { return a.add(b); }
  static __device__ __forceinline__ XYZZ<F> dbl(const XYZZ<F> &a) { return a.dbl(); }
};
template <> struct ReduceOps<DFp2> {
  static __device__ __noinline__ DXYZZ2 add(const DXYZZ2 &a, const DXYZZ2 &b) { return a.add(b); }
  static __device__ __noinline__ DXYZZ2 dbl(const DXYZZ2 &a) { return a.dbl(); }
};

__device__ __forceinline__ uint32_t scalar_bits(const DFr &s, int off, int c) {
  int limb = off >> 5, sh = off & 31;
  if (limb >= 8) return 0;
  uint64_t w = s.v[limb];
  if (limb + 1 < 8) w |= (uint64_t)s.v[limb + 1] << 32;
  return (uint32_t)(w >> sh) & ((1u << c) - 1);
}

// static: each MSM translation unit (msm_g1.cu, msm_g2.cu) has its own copy.
static __global__ void msm_digits(const DFr *scalars, uint64_t n, int c, int nw, uint32_t *keys,
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

// load_point reads a point as 16-byte loads (Affine<F> is 16-byte aligned
// and a multiple of 16 bytes: six loads for G1, twelve for G2) and
// negates it for a negative digit.
template <class F> __device__ __forceinline__ Affine<F> load_point(const Affine<F> *points, uint32_t v) {
  static_assert(sizeof(Affine<F>) % 16 == 0 && alignof(Affine<F>) == 16, "points move as 16-byte vectors");
  const uint4 *src = reinterpret_cast<const uint4 *>(points + (v & 0x7fffffffu));
  Affine<F> p;
  uint4 *dst = reinterpret_cast<uint4 *>(&p);
#pragma unroll
  for (int i = 0; i < (int)(sizeof(Affine<F>) / 16); i++) dst[i] = __ldg(src + i);
  if (v >> 31) p.y = p.y.neg();
  return p;
}

// prefetch_point asks L1 for the 128-byte lines a point may span (two for
// G1's 96 bytes, three for G2's 192), so the gather of the next point
// overlaps the addition of this one without holding it in registers
// (which would cost occupancy).
template <class F> __device__ __forceinline__ void prefetch_point(const Affine<F> *points, uint32_t v) {
  const char *p = reinterpret_cast<const char *>(points + (v & 0x7fffffffu));
#pragma unroll
  for (int off = 0; off < (int)sizeof(Affine<F>) - 1; off += 128) asm volatile("prefetch.global.L1 [%0];" ::"l"(p + off));
  asm volatile("prefetch.global.L1 [%0];" ::"l"(p + sizeof(Affine<F>) - 1));
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
// PB_RUNS_MIN_BLOCKS, when set, caps registers so that this many 128-thread
// blocks fit on an SM. The accumulation is latency-bound (ncu: 1.4
// instructions issued per cycle of 4, 2 blocks of 4 warps resident at 182
// registers), but capping did not pay: 3 blocks (168 registers) took
// 118.3 ms at 2^24 against 116.2 uncapped, and 4 blocks (128) spilled and
// took 142.6 against 131.9 (cuda/NOTES.md, v3). Off by default.
#ifndef PB_RUNS_MIN_BLOCKS
#define PB_RUNS_MIN_BLOCKS 1
#endif
template <class F, bool Points>
__global__ void __launch_bounds__(128, PB_RUNS_MIN_BLOCKS) msm_runs(const uint32_t *keys, const uint32_t *vals, const XYZZ<F> *items, uint64_t len,
                         uint32_t chunk, const Affine<F> *points, uint32_t bmask, XYZZ<F> *buckets,
                         uint32_t *out_keys, XYZZ<F> *out_items, bool final) {
  typedef XYZZ<F> DXYZZ;
  uint64_t t = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  uint64_t begin = t * chunk;
  if (begin >= len) return;
  uint64_t end = min(begin + chunk, len);
  uint32_t k = keys[begin];
  DXYZZ acc = DXYZZ::inf();
  bool in_first = true;
  for (uint64_t j = begin; j < end; j++) {
    uint32_t kj = keys[j];
#if !defined(PB_NO_PREFETCH)
    if (Points && j + 1 < end) prefetch_point(points, vals[j + 1]);
#endif
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

// The window sum Σ_b b·S_b (b = 1..2^(c−1)) in two kernels, with no
// scalar multiplication per segment: segment i of len buckets starts at
// lo_i = i·len + 1, and
//
//   Σ_b b·S_b = Σ_i T_i + len·Σ_i i·R_i,   T_i = Σ_{b in i} (b − lo_i + 1)·S_b,
//                                          R_i = Σ_{b in i} S_b.
//
// Thread (w, i) of msm_reduce_segments finds T_i and R_i by running sums
// from the segment's top: 2·len additions.
template <class F>
__global__ void msm_reduce_segments(const XYZZ<F> *buckets, int c, int nw, uint32_t segs, XYZZ<F> *t_out,
                                    XYZZ<F> *r_out) {
  typedef XYZZ<F> DXYZZ;
  typedef ReduceOps<F> Op;
  uint64_t id = (uint64_t)blockIdx.x * blockDim.x + threadIdx.x;
  if (id >= (uint64_t)nw * segs) return;
  uint32_t w = id / segs, seg = id % segs;
  uint32_t len = (1u << (c - 1)) / segs;
  uint32_t lo = seg * len + 1, hi = (seg + 1) * len;
  const DXYZZ *b = buckets + ((uint64_t)w << c);
  DXYZZ running = DXYZZ::inf(), sum = DXYZZ::inf();
  for (uint32_t i = hi; i >= lo; i--) {
    running = Op::add(running, b[i]);
    sum = Op::add(sum, running);
  }
  t_out[id] = sum;
  r_out[id] = running;
}

// One block per window (blockDim.x a power of two, shared memory one sum
// per thread): thread t takes q consecutive segments from s0 = t·q and
// finds Σ T_i, V = Σ R_i and U = Σ (i − s0)·R_i (running sums again), so
// that its share of the window is Σ T_i + len·(U + s0·V); s0·V is the one
// small multiple (at most 12 bits), len a power of two (doublings). Then
// the shares are added in a tree. The shared memory is declared as bytes
// (one extern array for every instantiation) and 16-byte aligned, as
// XYZZ<F> is.
template <class F>
__global__ void msm_reduce_window(const XYZZ<F> *t_in, const XYZZ<F> *r_in, uint32_t segs, uint32_t len,
                                  XYZZ<F> *out) {
  typedef XYZZ<F> DXYZZ;
  typedef ReduceOps<F> Op;
  extern __shared__ uint4 msm_reduce_shared[];
  DXYZZ *acc = reinterpret_cast<DXYZZ *>(msm_reduce_shared);
  const uint32_t q = (segs + blockDim.x - 1) / blockDim.x;
  const uint32_t s0 = threadIdx.x * q, s1 = min(s0 + q, segs);
  const DXYZZ *T = t_in + (uint64_t)blockIdx.x * segs;
  const DXYZZ *R = r_in + (uint64_t)blockIdx.x * segs;
  DXYZZ ts = DXYZZ::inf(), run = DXYZZ::inf(), u = DXYZZ::inf();
  for (uint32_t i = s1; i-- > s0;) {
    ts = Op::add(ts, T[i]);
    run = Op::add(run, R[i]);
    if (i > s0) u = Op::add(u, run);
  }
  DXYZZ x = DXYZZ::inf();
  if (s0 < s1) {
    DXYZZ m = DXYZZ::inf(); // s0·run: XYZZ::mul_small through Op
    for (int i = 31; i >= 0; i--) {
      m = Op::dbl(m);
      if ((s0 >> i) & 1) m = Op::add(m, run);
    }
    x = Op::add(u, m);
  }
  for (uint32_t l = len; l > 1; l >>= 1) x = Op::dbl(x);
  acc[threadIdx.x] = Op::add(ts, x);
  __syncthreads();
  for (uint32_t h = blockDim.x / 2; h > 0; h /= 2) {
    if (threadIdx.x < h) acc[threadIdx.x] = Op::add(acc[threadIdx.x], acc[threadIdx.x + h]);
    __syncthreads();
  }
  if (threadIdx.x == 0) out[blockIdx.x] = acc[0];
}

} // namespace pb

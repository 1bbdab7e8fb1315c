// ntt_tables.cuh — the NTT's device tables as kernel arguments (PowTable,
// Twist): what the transform's plan (ctx.cuh's NttPlan) holds and its
// kernels (ntt.cuh) read, kept apart from the kernels so that the library's
// other translation units can hold a plan without compiling them.
#pragma once

#include "field.cuh"

namespace pb {

// ldg reads an element as two 16-byte loads through the read-only path.
__device__ __forceinline__ DFr ldg(const DFr *p) {
  DFr r;
  const uint4 *s = reinterpret_cast<const uint4 *>(p);
  uint4 *d = reinterpret_cast<uint4 *>(&r);
  d[0] = __ldg(s);
  d[1] = __ldg(s + 1);
  return r;
}

// PowTable::get is out of line on purpose (ntt.cuh: code size).
//
// PowTable holds b^i for i < 2^lb (lo) and f·b^(j·2^lb) for j < 2^hb (hi),
// f being an optional factor folded into every power.
struct PowTable {
  DFr *lo = nullptr, *hi = nullptr;
  int lb = 0, hb = 0;
  __device__ __noinline__ DFr get(uint64_t e) const {
    return ldg(hi + (e >> lb)) * ldg(lo + (e & ((1ull << lb) - 1)));
  }
};

// Twist gives the four-step twist factors ω^e (ω^−e for the inverse)
// of a middle pass: from the plan's table of ω^i for all i < n when it has
// one (one load), else as a product of two PowTable entries (two loads and
// a product). ω^−e = ω^(n−e), so one table serves both directions.
struct Twist {
  PowTable w;                 // ω^e, or ω^−e when inverse (a table of ω⁻¹)
  const DFr *table = nullptr; // ω^i for i < n, or null
  uint64_t mask = 0;          // n − 1
  bool inverse = false;
  __device__ __forceinline__ const DFr *at(uint64_t e) const { return table + (inverse ? (0 - e) & mask : e); }
  __device__ __forceinline__ DFr get(uint64_t e) const { return table ? ldg(at(e)) : w.get(e); }
};

} // namespace pb

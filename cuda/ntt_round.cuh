// ntt_round.cuh — one round of the NTT pass kernel (ntt.cuh): R radix-2
// DIF stages done in registers on the 2^R elements a thread holds, and the
// shared-memory swizzle that keeps the rounds free of bank conflicts. On
// its own so that the host runs the very same code: cuda/gen/
// check_ntt_rounds.cpp checks the schedule against a plain DFT and the
// swizzle against every access pattern of the kernel, with g++, no GPU.
#pragma once

#include "field.cuh"

namespace pb {

// dif_round does R stages of a pass on x[0..2^R): x[m] is the element at
// position b + m·H of the group, b = g·2^R·H + r with r < H, so the
// stages' half sizes are 2^(R−1)·H, ..., 2H, H. The twiddle of offset j
// inside a half of size h is root(h, j) = ω_{2h}^j; j = 0 needs no
// product. R = 1 is the plain radix-2 butterfly. The R stages' products
// are independent within a stage (2^(R−1) of them), which the compiler
// interleaves: the instruction-level parallelism radix-2 lacks.
template <int R, class F, class Root>
PB_HD void dif_round(F *x, uint32_t r, uint32_t H, const Root &root) {
#pragma unroll
  for (int t = 0; t < R; t++) {
    const int d = 1 << (R - 1 - t); // partner distance in x
    const uint32_t h = H << (R - 1 - t);
#pragma unroll
    for (int m = 0; m < (1 << R); m++) {
      if (m & d) continue;
      const uint32_t j = r + (uint32_t)(m & (d - 1)) * H;
      F u = x[m], v = x[m + d];
      x[m] = u + v;
      x[m + d] = j == 0 ? u - v : (u - v) * root(h, j);
    }
  }
}

// swz is where element i of a group lives in shared memory. Elements are
// stored as 16-byte halves (ntt.cuh: lds, sts), eight to a 128-byte bank
// row, and a quarter warp's eight 16-byte accesses are conflict-free when
// they land in eight different columns (i mod 8). A round's threads touch
// elements whose varying index bits are {0,1,2} (H ≥ 8), or, as H shrinks
// to 4, 2, 1: {0,1,4}, {0,3,4}, {2,3,4} for R = 2; {0,1,5}, {0,4,5},
// {3,4,5} for R = 3; {0,1,3}, {0,2,3}, {1,2,3} for R = 1. XORing the column
// with 7·i3 ⊕ 5·i4 ⊕ 6·i5 (bits of i) maps each of these sets one-to-one
// onto the eight columns (check_ntt_rounds.cpp enumerates them); without
// it the late rounds conflict 4 to 8 ways.
PB_HD uint32_t swz(uint32_t i) {
  // column mask for (i3, i4, i5) = x, three bits per entry: x ↦ 7·i3 ⊕ 5·i4 ⊕ 6·i5
  constexpr uint32_t masks = (0u << 0) | (7u << 3) | (5u << 6) | (2u << 9) | (6u << 12) | (1u << 15) | (3u << 18) |
                             (4u << 21);
  return i ^ ((masks >> (3 * ((i >> 3) & 7))) & 7);
}

} // namespace pb

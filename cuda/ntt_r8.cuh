// ntt_r8.cuh — the radix-8 round of ntt_dif_pass8 (ntt.cuh), on its own
// so that the host can run it too: cuda/gen/check_ntt_r8.cpp checks its
// schedule against a plain DFT with g++, no GPU needed.
#pragma once

#include "field.cuh"

namespace pb {

// dif_r8 is one radix-8 round, three DIF stages st, st+1, st+2 of a
// k-stage pass, on the eight elements a thread holds: x[m] is the element
// at position b + m·H of the group, b = g·8H + r with r < H, and the
// stages' half sizes are 4H, 2H and H. An element's twiddle at stage σ is
// root(j << σ), j its offset inside its half, root(i) = ω_k^i. Written for
// the host too, so that the schedule can be checked against a plain DFT
// there (cuda/gen/check_ntt_r8.cpp).
template <class F, class Root>
PB_HD void dif_r8(F *x, uint32_t r, uint32_t H, int st, const Root &root) {
#pragma unroll
  for (int m = 0; m < 4; m++) { // half 4H: pairs (m, m + 4), j = r + m·H
    F u = x[m], v = x[m + 4];
    uint32_t j = r + m * H;
    x[m] = u + v;
    x[m + 4] = j == 0 ? u - v : (u - v) * root(j << st);
  }
#pragma unroll
  for (int q = 0; q < 4; q++) { // half 2H: pairs (m, m + 2), m = 0, 1, 4, 5
    int m = (q & 1) + 4 * (q >> 1);
    F u = x[m], v = x[m + 2];
    uint32_t j = r + (q & 1) * H;
    x[m] = u + v;
    x[m + 2] = j == 0 ? u - v : (u - v) * root(j << (st + 1));
  }
#pragma unroll
  for (int m = 0; m < 8; m += 2) { // half H: pairs (m, m + 1), j = r
    F u = x[m], v = x[m + 1];
    x[m] = u + v;
    x[m + 1] = r == 0 ? u - v : (u - v) * root(r << (st + 2));
  }
}

} // namespace pb

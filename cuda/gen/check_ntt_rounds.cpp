// check_ntt_rounds.cpp — checks the NTT pass kernel's schedule on the host
// (ntt.cuh: ntt_dif_rounds), with g++, no GPU:
//
//   1. one pass of k stages, k = 1..10, for R = 1, 2, 3 stages a round, run
//      thread by thread exactly as the kernel indexes its rounds (smem_round,
//      the remainder rounds, the swizzled positions, the stage-major local
//      roots), with dif_round and swz the very code the kernel runs, must
//      equal a plain DFT in bit-reversed order;
//   2. every shared-memory access pattern of those rounds must be free of
//      bank conflicts: each quarter warp's eight 16-byte accesses in eight
//      different columns (the count without the swizzle is printed too).
//
//   g++ -O2 -std=c++17 -I cuda -o build/check_ntt_rounds cuda/gen/check_ntt_rounds.cpp && build/check_ntt_rounds
#include <cstdio>
#include <functional>
#include <random>
#include <set>
#include <vector>

#include "ntt_round.cuh"

using namespace pb;

static HFr rand_fr(std::mt19937_64 &rng) {
  for (;;) { // uniform below r: draw 255 bits, keep what is below r
    HFr x;
    for (int i = 0; i < 4; i++) x.v[i] = rng();
    x.v[3] &= 0x7fffffffffffffffull;
    int i = 3;
    while (i >= 0 && x.v[i] == HFr::modw(i)) i--;
    if (i >= 0 && x.v[i] < HFr::modw(i)) return x;
  }
}

static uint32_t rev(uint32_t x, int bits) {
  uint32_t r = 0;
  for (int i = 0; i < bits; i++) r |= ((x >> i) & 1) << (bits - 1 - i);
  return r;
}

// swz must permute the positions of a group of n elements.
static bool swz_is_permutation(uint32_t n) {
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < n; i++)
    if (swz(i) >= n || !seen.insert(swz(i)).second) return false;
  return true;
}

// root_of_unity returns a primitive 2^k-th root of unity: 7^((r − 1)/2^k)
// (7 generates Fr*).
static HFr root_of_unity(int k) {
  uint32_t e[8];
  for (int i = 0; i < 8; i++) e[i] = FrParams::mod32(i);
  e[0] -= 1;
  for (int b = 0; b < k; b++)
    for (int i = 0; i < 8; i++) e[i] = (e[i] >> 1) | (i + 1 < 8 ? e[i + 1] << 31 : 0);
  HFr seven = HFr::zero();
  seven.v[0] = 7;
  return hfr_to_mont(seven).pow(e, 8);
}

// Units of one round as the kernel runs them: rounds of R stages, then the
// k mod R stages left as smaller rounds of 2^(R−rem) units a thread. f is
// called with (stages of the round, first stage, unit, thread).
static void for_each_unit(int R, int k, const std::function<void(int, int, uint32_t, uint32_t)> &f) {
  const uint32_t nt = (1u << k) >> R;
  int st = 0;
  for (; st + R <= k; st += R)
    for (uint32_t t = 0; t < nt; t++) f(R, st, t, t);
  const int rem = k - st;
  if (rem > 0)
    for (uint32_t q = 0; q < (1u << (R - rem)); q++)
      for (uint32_t t = 0; t < nt; t++) f(rem, st, t + q * nt, t);
}

// Unit u of a round of Rr stages from stage st: its elements' indices.
static std::vector<uint32_t> unit_elements(int Rr, int st, int k, uint32_t u) {
  const uint32_t H = (1u << k) >> (st + Rr), r = u & (H - 1), b = ((u - r) << Rr) + r;
  std::vector<uint32_t> v;
  for (uint32_t m = 0; m < (1u << Rr); m++) v.push_back(b + m * H);
  return v;
}

template <int Rr, class Root>
static void run_unit(std::vector<HFr> &smem, int st, int k, uint32_t u, const Root &root) {
  const uint32_t H = (1u << k) >> (st + Rr), r = u & (H - 1);
  const std::vector<uint32_t> at = unit_elements(Rr, st, k, u);
  HFr e[1 << Rr];
  for (int m = 0; m < (1 << Rr); m++) e[m] = smem[swz(at[m])];
  dif_round<Rr>(e, r, H, root);
  for (int m = 0; m < (1 << Rr); m++) smem[swz(at[m])] = e[m];
}

int main() {
  std::mt19937_64 rng(42);
  int failures = 0;
  for (int k = 1; k <= 10; k++) {
    const uint32_t n = 1u << k;
    const HFr w = root_of_unity(k);
    if (!(w.pow_u64(n / 2) == HFr::one().neg())) {
      printf("FAIL: w is not a primitive 2^%d-th root\n", k);
      return 1;
    }
    std::vector<HFr> pw(n);
    pw[0] = HFr::one();
    for (uint32_t i = 1; i < n; i++) pw[i] = pw[i - 1] * w;
    // The stage-major table, indexed as ntt_local_roots fills it.
    std::vector<HFr> table(n - 1);
    for (uint32_t i = 0; i + 1 < n; i++) {
      uint32_t h = n >> 1;
      while (i >= n - h) h >>= 1;
      table[i] = pw[(i - (n - 2 * h)) * (n / (2 * h))];
    }
    auto root = [&](uint32_t h, uint32_t j) { return table[n - 2 * h + j]; };
    std::vector<HFr> x(n);
    for (auto &v : x) v = rand_fr(rng);
    // Plain DFT: X_j = Σ_i x_i ω^(i·j); DIF leaves X_j at position rev(j).
    std::vector<HFr> want(n);
    for (uint32_t j = 0; j < n; j++) {
      HFr acc = HFr::zero();
      for (uint32_t i = 0; i < n; i++) acc = acc + x[i] * pw[(uint64_t)i * j % n];
      want[rev(j, k)] = acc;
    }
    for (int R = 1; R <= 3 && R <= k; R++) {
      std::vector<HFr> smem(n);
      for (uint32_t m = 0; m < n; m++) smem[swz(m)] = x[m];
      for_each_unit(R, k, [&](int Rr, int st, uint32_t u, uint32_t) {
        if (Rr == 3) run_unit<3>(smem, st, k, u, root);
        if (Rr == 2) run_unit<2>(smem, st, k, u, root);
        if (Rr == 1) run_unit<1>(smem, st, k, u, root);
      });
      int bad = 0;
      for (uint32_t m = 0; m < n; m++) bad += !(smem[swz(m)] == want[m]);
      // Bank conflicts: a quarter warp is 8 consecutive threads of a warp;
      // each of its accesses (one per element slot m) must hit 8 columns.
      int worst = 1, worst_plain = 1;
      const uint32_t nt = n >> R;
      if (nt >= 8) {
        std::vector<std::vector<uint32_t>> by_thread(nt);
        auto degree = [&](bool swizzled) {
          int d = 1;
          for (uint32_t t0 = 0; t0 < nt; t0 += 8)
            for (size_t slot = 0; slot < by_thread[t0].size(); slot++) {
              int count[8] = {0};
              for (uint32_t t = t0; t < t0 + 8; t++) {
                const uint32_t i = by_thread[t][slot];
                d = std::max(d, ++count[(swizzled ? swz(i) : i) & 7]);
              }
            }
          return d;
        };
        // the load and store phases, m = t + q·nt
        for (uint32_t t = 0; t < nt; t++)
          for (uint32_t q = 0; q < (1u << R); q++) by_thread[t].push_back(t + q * nt);
        worst = std::max(worst, degree(true));
        worst_plain = std::max(worst_plain, degree(false));
        // each round (a thread's units of one round, in order)
        int cur_st = -1;
        auto flush = [&] {
          if (cur_st >= 0) {
            worst = std::max(worst, degree(true));
            worst_plain = std::max(worst_plain, degree(false));
          }
          for (auto &v : by_thread) v.clear();
        };
        for (auto &v : by_thread) v.clear();
        for_each_unit(R, k, [&](int Rr, int st, uint32_t u, uint32_t t) {
          if (st != cur_st) {
            flush();
            cur_st = st;
          }
          for (uint32_t i : unit_elements(Rr, st, k, u)) by_thread[t].push_back(i);
        });
        flush();
      }
      const bool ok = bad == 0 && worst == 1 && swz_is_permutation(n);
      failures += !ok;
      printf("%s: k = %2d, R = %d: %u of %u outputs = plain DFT; bank conflicts %d-way (%d-way unswizzled)\n",
             ok ? "ok  " : "FAIL", k, R, n - bad, n, worst, worst_plain);
    }
  }
  printf("%s\n", failures ? "FAIL" : "all ok");
  return failures ? 1 : 0;
}

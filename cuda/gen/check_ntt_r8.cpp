// check_ntt_r8.cpp — checks the radix-8 schedule of ntt_dif_pass8 on the
// host: one 12-stage pass over 2^12 random elements of Fr, run thread by
// thread exactly as the kernel's rounds index them (dif_r8 is the very
// code the kernel runs), must equal a plain DFT in bit-reversed order.
//
//   g++ -O2 -std=c++17 -I cuda -o build/check_ntt_r8 cuda/gen/check_ntt_r8.cpp && build/check_ntt_r8
#include <cstdio>
#include <random>
#include <vector>

#include "ntt_r8.cuh"

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

int main() {
  const int k = 12;
  const uint32_t n = 1u << k;
  // ω = 7^((r − 1)/2^k), a primitive 2^k-th root of unity (7 generates
  // Fr*); checked: ω^(2^(k−1)) = −1.
  uint32_t e[8];
  for (int i = 0; i < 8; i++) e[i] = FrParams::mod32(i);
  e[0] -= 1;
  for (int b = 0; b < k; b++)
    for (int i = 0; i < 8; i++) e[i] = (e[i] >> 1) | (i + 1 < 8 ? e[i + 1] << 31 : 0);
  HFr seven = HFr::zero();
  seven.v[0] = 7;
  const HFr w = hfr_to_mont(seven).pow(e, 8);
  if (!(w.pow_u64(n / 2) == HFr::one().neg())) {
    printf("FAIL: w is not a primitive 2^%d-th root\n", k);
    return 1;
  }
  std::vector<HFr> pw(n);
  pw[0] = HFr::one();
  for (uint32_t i = 1; i < n; i++) pw[i] = pw[i - 1] * w;

  std::mt19937_64 rng(42);
  std::vector<HFr> x(n);
  for (auto &v : x) v = rand_fr(rng);

  // The kernel's rounds, thread by thread (threads of a round touch
  // disjoint elements, so order inside a round does not matter).
  std::vector<HFr> y = x;
  auto root = [&](uint32_t i) { return pw[i]; }; // ω_k^i, i < 2^(k−1)
  for (int st = 0; st < k; st += 3) {
    const uint32_t H = n >> (st + 3);
    for (uint32_t tid = 0; tid < n / 8; tid++) {
      const uint32_t r = tid & (H - 1), b = ((tid / H) * 8 * H) + r;
      HFr el[8];
      for (int m = 0; m < 8; m++) el[m] = y[b + m * H];
      dif_r8(el, r, H, st, root);
      for (int m = 0; m < 8; m++) y[b + m * H] = el[m];
    }
  }
  // Plain DFT: X_j = Σ_i x_i ω^(i·j); DIF leaves X_j at position rev(j).
  int bad = 0;
  for (uint32_t j = 0; j < n; j++) {
    HFr acc = HFr::zero();
    for (uint32_t i = 0; i < n; i++) acc = acc + x[i] * pw[(uint64_t)i * j % n];
    if (!(acc == y[rev(j, k)])) bad++;
  }
  printf("%s: radix-8 pass of 2^%d = plain DFT at %u of %u outputs\n", bad ? "FAIL" : "ok", k, n - bad, n);
  return bad ? 1 : 0;
}

// host_inputs.h — what the self-test (selftest.cu), the host checks
// (gen/check_ref_affine.cpp) and the sppark benchmark
// (bench/sppark/side_by_side.cu) draw their inputs from and read their
// constants with: the run's seed and its streams, random elements of Fr,
// the standard generators, roots of unity, and the discrete log of an MSM
// of the points (a + i·b)·G they make. Host-only C++ (g++ or nvcc's host
// pass); not part of the library.
#pragma once

#include <stdint.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "fp2.cuh"

namespace pb {

// The run's seed (printed first, --seed N sets it) and the generator its
// inputs are drawn from.
inline uint64_t seed;
inline std::mt19937_64 rng;

// use_stream reseeds rng from the seed for one part of a program (k names
// it), so that a part's inputs depend on the seed alone, not on which
// parts ran before it.
inline void use_stream(uint32_t k) {
  std::seed_seq ss{(uint32_t)seed, (uint32_t)(seed >> 32), k};
  rng.seed(ss);
}

// rand_fr draws a uniform element below r (rejection sampling), Montgomery
// form.
inline HFr rand_fr() {
  for (;;) {
    HFr x;
    for (auto &w : x.v) w = rng();
    x.v[3] &= 0x7fffffffffffffffull; // r < 2^255
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
      unsigned __int128 d = (unsigned __int128)x.v[i] - HFr::modw(i) - borrow;
      borrow = (uint64_t)(d >> 64) & 1;
    }
    if (borrow) return hfr_to_mont(x); // x − r borrowed: x < r
  }
}

inline std::vector<HFr> rand_vec(size_t n) {
  std::vector<HFr> v(n);
  for (auto &x : v) x = rand_fr();
  return v;
}

// fr_of returns k as an element of Fr (Montgomery form).
inline HFr fr_of(uint64_t k) {
  HFr x = HFr::zero();
  x.v[0] = k;
  return hfr_to_mont(x);
}

// root_of_unity returns ω of order 2^log_n, 7^((r−1)/2^log_n): 7
// generates Fr* (gnark-crypto's choice, and our prover's).
inline HFr root_of_unity(int log_n) {
  uint32_t e[8];
  for (int i = 0; i < 8; i++) e[i] = FrParams::mod32(i);
  e[0] -= 1; // r − 1 (r is odd, so no borrow)
  for (int k = 0; k < log_n; k++) // shift right by log_n
    for (int i = 0; i < 8; i++) e[i] = (e[i] >> 1) | (i + 1 < 8 ? e[i + 1] << 31 : 0);
  return fr_of(7).pow(e, 8);
}

// fp_hex reads a standard-form Fp from 96 hex digits, most significant
// first (as the BLS12-381 standard and gnark-crypto's Bytes() write it),
// into Montgomery form.
inline HFp fp_hex(const char *h) {
  HFp o;
  for (int i = 0; i < 6; i++) {
    char buf[17];
    memcpy(buf, h + (5 - i) * 16, 16);
    buf[16] = 0;
    o.v[i] = strtoull(buf, nullptr, 16);
  }
  return hfp_to_mont(o);
}

// G1's standard generator (gnark-crypto's, the IETF draft's), for fp_hex.
inline constexpr const char *kG1X =
    "17f1d3a73197d7942695638c4fa9ac0fc3688c4f9774b905a14e3a3f171bac586c55e83ff97a1aeffb3af00adb22c6bb";
inline constexpr const char *kG1Y =
    "08b3f481e3aaa0f1a09e30ed741d8ae4fcf5e095d5d00af600db18cb2c04b3edd03cc744a2888ae40caa232946c5e7e1";

// G2's generator, from the same standard (gnark-crypto's Generators()):
// x.A0, x.A1, y.A0, y.A1, for fp_hex.
inline constexpr const char *kG2[4] = {
    "024aa2b2f08f0a91260805272dc51051c6e47ad4fa403b02b4510b647ae3d1770bac0326a805bbefd48056c8c121bdb8",
    "13e02b6052719f607dacd3a088274f65596bd0d09920b61ab5da61bbdc7f5049334cf11213945d57e5ac7d055d042b7e",
    "0ce5d527727d6e118cc9cdc6da2e351aadfd9baa8cbdd3a76d429a695160d12c923ac9cc3baca289e193548608b82801",
    "0606c4a02ea734cc32acd2b02bc28b99cb3e287e85a763af267492ab572e99ab3f370d275cec1da1aaa9075ff05f79be"};

// generator and generator2 return G1's and G2's generators in the ABI's
// affine layouts.
inline Affine<HFp> generator() { return Affine<HFp>{fp_hex(kG1X), fp_hex(kG1Y)}; }
inline Affine<HFp2> generator2() {
  return Affine<HFp2>{HFp2{fp_hex(kG2[0]), fp_hex(kG2[1])}, HFp2{fp_hex(kG2[2]), fp_hex(kG2[3])}};
}

// parse_u64 reads an unsigned decimal number that fits 64 bits.
inline bool parse_u64(const std::string &v, uint64_t *out) {
  if (v.empty() || v.size() > 20 || v.find_first_not_of("0123456789") != std::string::npos) return false;
  errno = 0;
  char *end;
  unsigned long long x = strtoull(v.c_str(), &end, 10);
  if (errno == ERANGE || *end) return false;
  *out = x;
  return true;
}

// prefix_dots returns Σ_{i<n} s_i·(a + i·b) for each n of ns (ascending):
// the discrete log of the MSM of the first n of the points (a + i·b)·G,
// so that such an MSM is checked against (prefix_dots)·G without curve
// arithmetic of n terms.
inline std::vector<HFr> prefix_dots(const std::vector<HFr> &s, const HFr &a, const HFr &b,
                                    const std::vector<uint64_t> &ns) {
  std::vector<HFr> out;
  HFr acc = HFr::zero(), l = a;
  size_t k = 0;
  for (uint64_t i = 0; k < ns.size() && i < s.size(); i++, l = l + b) {
    acc = acc + s[i] * l;
    for (; k < ns.size() && i + 1 == ns[k]; k++) out.push_back(acc);
  }
  return out;
}

} // namespace pb

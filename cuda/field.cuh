// field.cuh — BLS12-381 base field Fp and scalar field Fr in Montgomery
// form, in gnark-crypto's memory layout: little-endian limbs, R = 2^384 for
// Fp (6 × 64 bits) and R = 2^256 for Fr (4 × 64 bits). The same bytes read
// as 12 or 8 little-endian 32-bit words are the same number, so the device
// works on 32-bit words (the GPU's native multiply) and the host on 64-bit
// words, and nothing is converted at the boundary.
//
// One CIOS Montgomery multiplication, written once over the word type,
// serves both: Fe<P, uint32_t, uint64_t> on the device and
// Fe<P, uint64_t, unsigned __int128> on the host.
#pragma once

#include <stddef.h>
#include <stdint.h>

// On the device, add, subtract and the product's final reduction run as
// PTX carry chains (mont_ptx.cuh: pb_add_*, pb_sub_*, pb_reduce_*);
// -DPB_NO_PTX_CHAINS keeps the C++ forms below, to measure one against the
// other.
#if defined(__CUDA_ARCH__) && !defined(PB_NO_PTX) && !defined(PB_NO_PTX_CHAINS)
#define PB_PTX_CHAINS 1
#else
#define PB_PTX_CHAINS 0
#endif

// PB_MONT_PLAIN builds against the products without Fr's multiply-free
// low words, to measure one against the other: bench/cuda-variants.sh
// writes that header (cuda/gen/mont_ptx.py --plain) into the build and
// puts it on the include path.
#if defined(PB_MONT_PLAIN)
#include "mont_ptx_plain.cuh"
#else
#include "mont_ptx.cuh"
#endif

#if defined(__CUDACC__)
#define PB_HD __host__ __device__ __forceinline__
#else
#define PB_HD inline
#endif

namespace pb {

// Constants as 32-bit words, low first. Device copies live in constant
// memory: an unrolled loop reads them as operands of the multiply.
#define PB_FP_MOD                                                                      \
  {0xffffaaab, 0xb9feffff, 0xb153ffff, 0x1eabfffe, 0xf6b0f624, 0x6730d2a0, 0xf38512bf, \
   0x64774b84, 0x434bacd7, 0x4b1ba7b6, 0x397fe69a, 0x1a0111ea}
#define PB_FP_ONE                                                                      \
  {0x0002fffd, 0x76090000, 0xc40c0002, 0xebf4000b, 0x53c758ba, 0x5f489857, 0x70525745, \
   0x77ce5853, 0xa256ec6d, 0x5c071a97, 0xfa80e493, 0x15f65ec3}
#define PB_FP_R2                                                                       \
  {0x1c341746, 0xf4df1f34, 0x09d104f1, 0x0a76e6a6, 0x4c95b6d5, 0x8de5476c, 0x939d83c0, \
   0x67eb88a9, 0xb519952d, 0x9a793e85, 0x92cae3aa, 0x11988fe5}
#define PB_FR_MOD \
  {0x00000001, 0xffffffff, 0xfffe5bfe, 0x53bda402, 0x09a1d805, 0x3339d808, 0x299d7d48, 0x73eda753}
#define PB_FR_ONE \
  {0xfffffffe, 0x00000001, 0x00034802, 0x5884b7fa, 0xecbc4ff5, 0x998c4fef, 0xacc5056f, 0x1824b159}
#define PB_FR_R2 \
  {0xf3f29c6d, 0xc999e990, 0x87925c23, 0x2b6cedcb, 0x7254398f, 0x05d31496, 0x9f59ff11, 0x0748d9d9}

// static: every translation unit of the library has its own copy in its
// own module (no relocatable device code), and no host symbol clashes.
#if defined(__CUDACC__)
static __constant__ uint32_t d_fp_mod[12] = PB_FP_MOD;
static __constant__ uint32_t d_fp_one[12] = PB_FP_ONE;
static __constant__ uint32_t d_fr_mod[8] = PB_FR_MOD;
static __constant__ uint32_t d_fr_one[8] = PB_FR_ONE;
// Fr's −r⁻¹ mod 2^32 (FrParams::inv32) for the PTX product, read from
// constant memory on purpose: as an immediate, ptxas turns m = A_0·inv
// into −A_0 and then splits every m·r_j word product in two (cuda/gen/
// mont_ptx.py, step 3).
static __constant__ uint32_t d_fr_inv = 0xffffffffu;
#endif
static const uint32_t h_fp_mod[12] = PB_FP_MOD;
static const uint32_t h_fp_one[12] = PB_FP_ONE;
static const uint32_t h_fp_r2[12] = PB_FP_R2;
static const uint32_t h_fr_mod[8] = PB_FR_MOD;
static const uint32_t h_fr_one[8] = PB_FR_ONE;
static const uint32_t h_fr_r2[8] = PB_FR_R2;

#if defined(__CUDA_ARCH__)
#define PB_CONST(dev, host) dev
#else
#define PB_CONST(dev, host) host
#endif

// Parameters of a field: its size in 32-bit words, −p⁻¹ mod 2^32 (and
// mod 2^64), and accessors for p and R mod p (one in Montgomery form).
struct FpParams {
  static constexpr int W32 = 12;
  static constexpr uint32_t inv32 = 0xfffcfffdu;
  static constexpr uint64_t inv64 = 0x89f3fffcfffcfffdull;
  static constexpr int bits = 381;
  PB_HD static uint32_t mod32(int i) { return PB_CONST(d_fp_mod, h_fp_mod)[i]; }
  PB_HD static uint32_t one32(int i) { return PB_CONST(d_fp_one, h_fp_one)[i]; }
};

struct FrParams {
  static constexpr int W32 = 8;
  static constexpr uint32_t inv32 = 0xffffffffu;
  static constexpr uint64_t inv64 = 0xfffffffeffffffffull;
  static constexpr int bits = 255;
  PB_HD static uint32_t mod32(int i) { return PB_CONST(d_fr_mod, h_fr_mod)[i]; }
  PB_HD static uint32_t one32(int i) { return PB_CONST(d_fr_one, h_fr_one)[i]; }
};
static_assert(FrParams::inv32 == 0xffffffffu, "d_fr_inv must hold FrParams::inv32");

template <class W> struct WordTraits;
template <> struct WordTraits<uint32_t> {
  typedef uint64_t Wide;
  static constexpr int bits = 32;
};
template <> struct WordTraits<uint64_t> {
  typedef unsigned __int128 Wide;
  static constexpr int bits = 64;
};

// Fe is an element of the field P in Montgomery form, in words of type W.
// The device form (32-bit words) is 16-byte aligned, so that an element
// moves as 16-byte vector loads and stores (two for Fr, three for Fp)
// instead of one instruction per word; the sizes, 32 and 48 bytes, are
// multiples of 16, so arrays keep gnark-crypto's layout. The host form
// keeps 8-byte alignment: it may be read straight from Go's memory.
template <class P, class W> struct alignas(sizeof(W) == 4 ? 16 : 8) Fe {
  typedef typename WordTraits<W>::Wide DW;
  static constexpr int WB = WordTraits<W>::bits;
  static constexpr int N = P::W32 * 32 / WB;
  W v[N];

  PB_HD static W modw(int i) {
    if (WB == 32) return (W)P::mod32(i);
    return (W)P::mod32(2 * i) | ((W)P::mod32(2 * i + 1) << (WB / 2));
  }
  PB_HD static W onew(int i) {
    if (WB == 32) return (W)P::one32(i);
    return (W)P::one32(2 * i) | ((W)P::one32(2 * i + 1) << (WB / 2));
  }
  PB_HD static W inv() { return WB == 32 ? (W)P::inv32 : (W)P::inv64; }

  PB_HD static Fe zero() {
    Fe r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = 0;
    return r;
  }
  PB_HD static Fe one() {
    Fe r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = onew(i);
    return r;
  }
  PB_HD bool is_zero() const {
    W acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= v[i];
    return acc == 0;
  }
  PB_HD bool operator==(const Fe &o) const {
    W acc = 0;
#pragma unroll
    for (int i = 0; i < N; i++) acc |= v[i] ^ o.v[i];
    return acc == 0;
  }
  PB_HD bool operator!=(const Fe &o) const { return !(*this == o); }

  // t − p where t < 2p: returns t mod p. hi is a word above t's top word.
  PB_HD static Fe reduce_once(const W *t, W hi) {
    Fe r;
    W borrow = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      DW d = (DW)t[i] - modw(i) - borrow;
      r.v[i] = (W)d;
      borrow = (W)(d >> WB) & 1;
    }
    // Keep t when t < p: the subtraction borrowed out of the top and
    // there was no extra high word to pay for it.
    if (borrow > hi) {
#pragma unroll
      for (int i = 0; i < N; i++) r.v[i] = t[i];
    }
    return r;
  }

  PB_HD Fe operator+(const Fe &b) const {
#if PB_PTX_CHAINS
    if constexpr (WB == 32) {
      Fe r = *this;
      if constexpr (N == 12) pb_add_fp(r.v, b.v);
      else pb_add_fr(r.v, b.v);
      return r;
    }
#endif
    W t[N];
    W carry = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      DW s = (DW)v[i] + b.v[i] + carry;
      t[i] = (W)s;
      carry = (W)(s >> WB);
    }
    return reduce_once(t, carry);
  }
  PB_HD Fe operator-(const Fe &b) const {
#if PB_PTX_CHAINS
    if constexpr (WB == 32) {
      Fe r = *this;
      if constexpr (N == 12) pb_sub_fp(r.v, b.v);
      else pb_sub_fr(r.v, b.v);
      return r;
    }
#endif
    Fe r;
    W borrow = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      DW d = (DW)v[i] - b.v[i] - borrow;
      r.v[i] = (W)d;
      borrow = (W)(d >> WB) & 1;
    }
    if (borrow) {
      W carry = 0;
#pragma unroll
      for (int i = 0; i < N; i++) {
        DW s = (DW)r.v[i] + modw(i) + carry;
        r.v[i] = (W)s;
        carry = (W)(s >> WB);
      }
    }
    return r;
  }
  PB_HD Fe dbl() const { return *this + *this; }
  PB_HD Fe neg() const { return is_zero() ? *this : zero() - *this; }

  // Montgomery product a·b·R⁻¹ mod p (coarsely integrated operand
  // scanning). Every partial sum a·b + t + carry fits the double word.
  PB_HD Fe operator*(const Fe &b) const {
#if defined(__CUDA_ARCH__) && !defined(PB_NO_PTX)
    // The PTX product (mont_ptx.cuh; cuda/NOTES.md v3); -DPB_NO_PTX_FR
    // keeps the compiler's own for Fr, to measure one against the other.
#if defined(PB_NO_PTX_FR)
    if constexpr (WB == 32 && N == 12) return mul_ptx(b);
    else return mul_cios(b);
#else
    if constexpr (WB == 32) return mul_ptx(b);
    else return mul_cios(b);
#endif
#else
    return mul_cios(b);
#endif
  }
  PB_HD Fe mul_cios(const Fe &b) const {
    W t[N + 2];
#pragma unroll
    for (int i = 0; i < N + 2; i++) t[i] = 0;
#pragma unroll
    for (int i = 0; i < N; i++) {
      W carry = 0;
#pragma unroll
      for (int j = 0; j < N; j++) {
        DW s = (DW)v[j] * b.v[i] + t[j] + carry;
        t[j] = (W)s;
        carry = (W)(s >> WB);
      }
      DW s = (DW)t[N] + carry;
      t[N] = (W)s;
      t[N + 1] = (W)(s >> WB);
      W m = t[0] * inv();
      s = (DW)m * modw(0) + t[0];
      carry = (W)(s >> WB);
#pragma unroll
      for (int j = 1; j < N; j++) {
        s = (DW)m * modw(j) + t[j] + carry;
        t[j - 1] = (W)s;
        carry = (W)(s >> WB);
      }
      s = (DW)t[N] + carry;
      t[N - 1] = (W)s;
      t[N] = t[N + 1] + (W)(s >> WB);
    }
    return reduce_once(t, t[N]);
  }
  PB_HD Fe sqr() const { return *this * *this; }

#if defined(__CUDACC__)
  // mul_ptx is the CIOS product with its word products in pairs, each pair
  // one IMAD.WIDE.U32.X on sm_90 (cuda/gen/mont_ptx.py says how and checks
  // the chains); it leaves a value below 2p, reduced here once.
  __device__ __forceinline__ Fe mul_ptx(const Fe &b) const {
    static_assert(N == 12 || N == 8, "Fp or Fr");
    uint32_t t[N];
    if constexpr (N == 12)
      pb_mont_fp(t, reinterpret_cast<const uint32_t *>(v), reinterpret_cast<const uint32_t *>(b.v));
    else
      pb_mont_fr(t, reinterpret_cast<const uint32_t *>(v), reinterpret_cast<const uint32_t *>(b.v), d_fr_inv);
#if PB_PTX_CHAINS
    Fe r;
#pragma unroll
    for (int i = 0; i < N; i++) r.v[i] = t[i];
    if constexpr (N == 12) pb_reduce_fp(r.v);
    else pb_reduce_fr(r.v);
    return r;
#else
    W tw[N];
#pragma unroll
    for (int i = 0; i < N; i++) tw[i] = (W)t[i];
    return reduce_once(tw, 0);
#endif
  }
#endif

  // from_mont returns the standard-form value (a·R⁻¹), to_mont the
  // Montgomery form of a standard value below p.
  PB_HD Fe from_mont() const {
    Fe one_std = zero();
    one_std.v[0] = 1;
    return *this * one_std;
  }

  // pow returns a^e for an exponent given as 32-bit words, low first.
  PB_HD Fe pow(const uint32_t *e, int words) const {
    Fe r = one();
    for (int i = words * 32 - 1; i >= 0; i--) {
      r = r.sqr();
      if ((e[i / 32] >> (i % 32)) & 1) r = r * *this;
    }
    return r;
  }
  PB_HD Fe pow_u64(uint64_t e) const {
    uint32_t w[2] = {(uint32_t)e, (uint32_t)(e >> 32)};
    return pow(w, 2);
  }
  // inverse by Fermat: a^(p−2). Zero maps to zero.
  PB_HD Fe inverse() const {
    uint32_t e[P::W32];
    uint32_t borrow = 2;
    for (int i = 0; i < P::W32; i++) {
      uint64_t d = (uint64_t)P::mod32(i) - borrow;
      e[i] = (uint32_t)d;
      borrow = (uint32_t)(d >> 63);
    }
    return pow(e, P::W32);
  }
};

typedef Fe<FpParams, uint32_t> DFp; // device Fp
typedef Fe<FrParams, uint32_t> DFr; // device Fr
typedef Fe<FpParams, uint64_t> HFp; // host Fp
typedef Fe<FrParams, uint64_t> HFr; // host Fr

static_assert(sizeof(DFp) == 48 && sizeof(HFp) == 48, "Fp is 48 bytes, as fp.Element");
static_assert(sizeof(DFr) == 32 && sizeof(HFr) == 32, "Fr is 32 bytes, as fr.Element");

// Host helpers: Montgomery form of a standard value, and back.
inline HFp hfp_to_mont(const HFp &a) {
  HFp r2;
  for (int i = 0; i < 6; i++) r2.v[i] = (uint64_t)h_fp_r2[2 * i] | ((uint64_t)h_fp_r2[2 * i + 1] << 32);
  return a * r2;
}
inline HFr hfr_to_mont(const HFr &a) {
  HFr r2;
  for (int i = 0; i < 4; i++) r2.v[i] = (uint64_t)h_fr_r2[2 * i] | ((uint64_t)h_fr_r2[2 * i + 1] << 32);
  return a * r2;
}

} // namespace pb

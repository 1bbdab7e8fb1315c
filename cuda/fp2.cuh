// fp2.cuh — Fp2 = Fp[u]/(u² + 1), the field of BLS12-381's G2 (the twist
// y² = x³ + 4(1 + u)), over either form of Fp (field.cuh): Fp2<DFp> on the
// device, Fp2<HFp> on the host. It offers the interface curve.cuh's
// templates use (+, −, *, dbl, neg, sqr, is_zero, ==, one, zero, inverse),
// so G2 is Affine<Fp2<F>>, XYZZ<Fp2<F>> and Jacobian<Fp2<F>> with the same
// formulas as G1 (they hold for any a = 0 curve; b is never used).
//
// Layout: c0 then c1, each an Fp in Montgomery form: gnark-crypto's
// fptower.E2 {A0, A1 fp.Element}, 96 bytes (16-byte aligned on the device,
// so a point still moves as 16-byte vector loads).
#pragma once

#include "field.cuh"

namespace pb {

template <class F> struct Fp2 {
  F c0, c1; // c0 + c1·u

  PB_HD static Fp2 zero() { return Fp2{F::zero(), F::zero()}; }
  PB_HD static Fp2 one() { return Fp2{F::one(), F::zero()}; }
  PB_HD bool is_zero() const { return c0.is_zero() && c1.is_zero(); }
  PB_HD bool operator==(const Fp2 &o) const { return c0 == o.c0 && c1 == o.c1; }
  PB_HD bool operator!=(const Fp2 &o) const { return !(*this == o); }

  PB_HD Fp2 operator+(const Fp2 &b) const { return Fp2{c0 + b.c0, c1 + b.c1}; }
  PB_HD Fp2 operator-(const Fp2 &b) const { return Fp2{c0 - b.c0, c1 - b.c1}; }
  PB_HD Fp2 dbl() const { return Fp2{c0.dbl(), c1.dbl()}; }
  PB_HD Fp2 neg() const { return Fp2{c0.neg(), c1.neg()}; }

  // Karatsuba, 3 Fp products: (a0 + a1·u)(b0 + b1·u) with u² = −1 is
  // a0·b0 − a1·b1 + ((a0 + a1)(b0 + b1) − a0·b0 − a1·b1)·u.
  PB_HD Fp2 operator*(const Fp2 &b) const {
    F v0 = c0 * b.c0;
    F v1 = c1 * b.c1;
    F s = (c0 + c1) * (b.c0 + b.c1);
    return Fp2{v0 - v1, s - v0 - v1};
  }

  // 2 Fp products: (a0 + a1·u)² = (a0 + a1)(a0 − a1) + 2·a0·a1·u.
  PB_HD Fp2 sqr() const {
    F t = c0 * c1;
    return Fp2{(c0 + c1) * (c0 - c1), t.dbl()};
  }

  // mul_fp multiplies by an element of Fp.
  PB_HD Fp2 mul_fp(const F &b) const { return Fp2{c0 * b, c1 * b}; }

  // inverse: (a0 − a1·u)/(a0² + a1²), one Fp inversion (Fermat; host use).
  // Zero maps to zero.
  PB_HD Fp2 inverse() const {
    F t = (c0.sqr() + c1.sqr()).inverse();
    return Fp2{c0 * t, (c1 * t).neg()};
  }
};

typedef Fp2<DFp> DFp2; // device Fp2
typedef Fp2<HFp> HFp2; // host Fp2

static_assert(sizeof(DFp2) == 96 && sizeof(HFp2) == 96, "Fp2 is 96 bytes, as fptower.E2");
static_assert(alignof(DFp2) == 16, "device Fp2 moves as 16-byte vectors");

} // namespace pb

// curve.cuh — BLS12-381 G1 (y² = x³ + 4 over Fp) and G2 (y² = x³ + 4(1 + u)
// over Fp2, fp2.cuh) in the forms the MSM needs, written once over the
// field type so host and device, G1 and G2, share them:
//
//   Affine  (x, y), gnark-crypto's G1Affine / G2Affine layout; (0, 0) is
//           infinity.
//   XYZZ    (X, Y, ZZ, ZZZ) with x = X/ZZ, y = Y/ZZZ, ZZ³ = ZZZ²; ZZ = 0 is
//           infinity. Additions of an affine point cost 8M + 2S and need no
//           inversion, which is why buckets accumulate in it.
//   Jacobian (X, Y, Z) with x = X/Z², y = Y/Z³, gnark-crypto's G1Jac /
//           G2Jac layout; what the ABI returns.
//
// Formulas: the "xyzz" coordinates of the Explicit-Formulas Database
// (add-2008-s, madd-2008-s, dbl-2008-s-1, mdbl-2008-s-1) for a = 0: they
// never use b, so G1 and G2 run the very same code.
#pragma once

#include "fp2.cuh"

namespace pb {

template <class F> struct Affine {
  F x, y;
  PB_HD bool is_inf() const { return x.is_zero() && y.is_zero(); }
  PB_HD Affine neg() const { return Affine{x, y.neg()}; }
};

template <class F> struct Jacobian {
  F x, y, z;
};

template <class F> struct XYZZ {
  F x, y, zz, zzz;

  PB_HD static XYZZ inf() {
    XYZZ r;
    r.x = F::one();
    r.y = F::one();
    r.zz = F::zero();
    r.zzz = F::zero();
    return r;
  }
  PB_HD bool is_inf() const { return zz.is_zero(); }
  PB_HD static XYZZ from_affine(const Affine<F> &a) {
    if (a.is_inf()) return inf();
    return XYZZ{a.x, a.y, F::one(), F::one()};
  }
  PB_HD XYZZ neg() const { return XYZZ{x, y.neg(), zz, zzz}; }

  // dbl-2008-s-1
  PB_HD XYZZ dbl() const {
    if (is_inf()) return *this;
    F u = y.dbl();
    F v = u.sqr();
    F w = u * v;
    F s = x * v;
    F xx = x.sqr();
    F m = xx.dbl() + xx;
    XYZZ r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * y;
    r.zz = v * zz;
    r.zzz = w * zzz;
    return r;
  }

  // mdbl-2008-s-1: 2·a for an affine a (not infinity).
  PB_HD static XYZZ dbl_affine(const Affine<F> &a) {
    F u = a.y.dbl();
    F v = u.sqr();
    F w = u * v;
    F s = a.x * v;
    F xx = a.x.sqr();
    F m = xx.dbl() + xx;
    XYZZ r;
    r.x = m.sqr() - s.dbl();
    r.y = m * (s - r.x) - w * a.y;
    r.zz = v;
    r.zzz = w;
    return r;
  }

  // madd-2008-s: this + a for an affine a.
  PB_HD XYZZ add_affine(const Affine<F> &a) const {
    if (a.is_inf()) return *this;
    if (is_inf()) return from_affine(a);
    F u2 = a.x * zz;
    F s2 = a.y * zzz;
    F p = u2 - x;
    F r = s2 - y;
    if (p.is_zero()) {
      if (r.is_zero()) return dbl_affine(a);
      return inf();
    }
    F pp = p.sqr();
    F ppp = p * pp;
    F q = x * pp;
    XYZZ o;
    o.x = r.sqr() - ppp - q.dbl();
    o.y = r * (q - o.x) - y * ppp;
    o.zz = zz * pp;
    o.zzz = zzz * ppp;
    return o;
  }

  // add-2008-s: this + b.
  PB_HD XYZZ add(const XYZZ &b) const {
    if (b.is_inf()) return *this;
    if (is_inf()) return b;
    F u1 = x * b.zz;
    F u2 = b.x * zz;
    F s1 = y * b.zzz;
    F s2 = b.y * zzz;
    F p = u2 - u1;
    F r = s2 - s1;
    if (p.is_zero()) {
      if (r.is_zero()) return dbl();
      return inf();
    }
    F pp = p.sqr();
    F ppp = p * pp;
    F q = u1 * pp;
    XYZZ o;
    o.x = r.sqr() - ppp - q.dbl();
    o.y = r * (q - o.x) - s1 * ppp;
    o.zz = zz * b.zz * pp;
    o.zzz = zzz * b.zzz * ppp;
    return o;
  }

  // mul_small returns k·this for a small k ≥ 0 (double and add).
  PB_HD XYZZ mul_small(uint32_t k) const {
    XYZZ acc = inf();
    for (int i = 31; i >= 0; i--) {
      acc = acc.dbl();
      if ((k >> i) & 1) acc = acc.add(*this);
    }
    return acc;
  }

  // Jacobian with Z = ZZZ: since ZZZ² = ZZ³, X·ZZ²/ZZZ² = X/ZZ and
  // Y·ZZZ²/ZZZ³ = Y/ZZZ. Infinity becomes gnark-crypto's (1, 1, 0).
  PB_HD Jacobian<F> to_jacobian() const {
    Jacobian<F> j;
    if (is_inf()) {
      j.x = F::one();
      j.y = F::one();
      j.z = F::zero();
      return j;
    }
    j.x = x * zz.sqr();
    j.y = y * zzz.sqr();
    j.z = zzz;
    return j;
  }

  // to_affine divides out (one inversion); host use.
  PB_HD Affine<F> to_affine() const {
    if (is_inf()) return Affine<F>{F::zero(), F::zero()};
    F izzz = zzz.inverse();
    F iz = izzz * zz;    // 1/z with z = ZZZ/ZZ
    F izz = iz.sqr();    // 1/ZZ
    return Affine<F>{x * izz, y * izzz};
  }
};

static_assert(sizeof(Affine<DFp>) == 96, "G1Affine is 96 bytes");
static_assert(sizeof(Jacobian<DFp>) == 144, "G1Jac is 144 bytes");
static_assert(sizeof(Affine<DFp2>) == 192 && sizeof(Affine<HFp2>) == 192, "G2Affine is 192 bytes");
static_assert(sizeof(Jacobian<DFp2>) == 288 && sizeof(Jacobian<HFp2>) == 288, "G2Jac is 288 bytes");
static_assert(sizeof(XYZZ<DFp2>) == sizeof(XYZZ<HFp2>), "host and device G2 XYZZ agree");

typedef Affine<DFp> DAffine;   // G1
typedef XYZZ<DFp> DXYZZ;
typedef Affine<DFp2> DAffine2; // G2
typedef XYZZ<DFp2> DXYZZ2;

} // namespace pb

// ref_affine.h — an independent host reference for BLS12-381 G1 and G2:
// the textbook affine group law (one field inversion an addition or a
// doubling) and plain double-and-add over it. It shares nothing with
// curve.cuh's XYZZ and Jacobian formulas, which the device's MSM and the
// self-test's older reference both use, so a mistake in those formulas
// cannot pass by agreeing with itself. Only the field arithmetic is shared
// (field.cuh, fp2.cuh), and that is checked against gnark-crypto's values
// by make cuda-host-check.
//
// Host-only C++ (g++ or nvcc's host pass). The law, for y² = x³ + b:
//
//   P + ∞ = P;  P + (−P) = ∞;  P + P = 2P;
//   P + Q (x_P ≠ x_Q): λ = (y_Q − y_P)/(x_Q − x_P)
//   2P (y_P ≠ 0):      λ = 3x_P²/(2y_P)
//   then x = λ² − x_P − x_Q (x_Q = x_P for 2P), y = λ(x_P − x) − y_P.
//
// A Ref point carries infinity as a flag; from() and equals() read and
// compare the ABI's layouts, where affine (0, 0) and Jacobian Z = 0 are
// infinity (gnark-crypto's conventions).
#pragma once

#include <stdint.h>

#include <vector>

#include "fp2.cuh"

namespace pb {
namespace ref {

template <class F> struct Point {
  F x, y;
  bool inf;

  static Point infinity() { return Point{F::zero(), F::zero(), true}; }

  // from reads an affine point of the ABI's layout (.x, .y; (0, 0) is ∞).
  template <class A> static Point from(const A &a) {
    if (a.x.is_zero() && a.y.is_zero()) return infinity();
    return Point{a.x, a.y, false};
  }

  Point neg() const { return inf ? *this : Point{x, y.neg(), false}; }
  bool operator==(const Point &o) const { return inf || o.inf ? inf == o.inf : x == o.x && y == o.y; }
  bool operator!=(const Point &o) const { return !(*this == o); }

  // equals_jacobian compares with a Jacobian point (.x, .y, .z; x = X/Z²,
  // y = Y/Z³; Z = 0 is ∞) without an inversion: X = x·Z², Y = y·Z³.
  template <class J> bool equals_jacobian(const J &j) const {
    if (j.z.is_zero() || inf) return j.z.is_zero() && inf;
    F z2 = j.z * j.z;
    return j.x == x * z2 && j.y == y * z2 * j.z;
  }

  // to_layout writes the point in an ABI affine type A ((0, 0) for ∞).
  template <class A> A to_layout() const {
    A a;
    a.x = inf ? F::zero() : x;
    a.y = inf ? F::zero() : y;
    return a;
  }
};

// from_jacobian divides out Z (one inversion): x = X/Z², y = Y/Z³.
template <class F, class J> Point<F> from_jacobian(const J &j) {
  if (j.z.is_zero()) return Point<F>::infinity();
  F zi = j.z.inverse();
  F zi2 = zi * zi;
  return Point<F>{j.x * zi2, j.y * zi2 * zi, false};
}

template <class F> Point<F> dbl(const Point<F> &p) {
  if (p.inf || p.y.is_zero()) return Point<F>::infinity(); // a point of order 2 (none on these curves)
  F xx = p.x * p.x;
  F lambda = (xx + xx + xx) * (p.y + p.y).inverse();
  F x = lambda * lambda - p.x - p.x;
  return Point<F>{x, lambda * (p.x - x) - p.y, false};
}

template <class F> Point<F> add(const Point<F> &p, const Point<F> &q) {
  if (p.inf) return q;
  if (q.inf) return p;
  if (p.x == q.x) return p.y == q.y ? dbl(p) : Point<F>::infinity(); // same x: Q = P or Q = −P
  F lambda = (q.y - p.y) * (q.x - p.x).inverse();
  F x = lambda * lambda - p.x - q.x;
  return Point<F>{x, lambda * (p.x - x) - p.y, false};
}

// mul_words returns k·P for k given as 64-bit words, low first, in
// standard form (not reduced mod r: r·P and (r + 1)·P are well defined).
template <class F> Point<F> mul_words(const Point<F> &p, const uint64_t *k, int words) {
  Point<F> acc = Point<F>::infinity();
  for (int i = 64 * words - 1; i >= 0; i--) {
    acc = dbl(acc);
    if ((k[i / 64] >> (i % 64)) & 1) acc = add(acc, p);
  }
  return acc;
}

// mul returns k·P for a scalar in Montgomery form (HFr, as the ABI takes).
template <class F> Point<F> mul(const Point<F> &p, const HFr &k_mont) {
  HFr k = k_mont.from_mont();
  return mul_words(p, k.v, 4);
}

// msm returns Σ s_i·P_i by double-and-add over all terms at once (one
// doubling a bit for the whole sum, then the points whose scalar has that
// bit): 255 doublings and about n·128 additions, each with an inversion,
// so it is for hundreds of points, not millions. A is the ABI's affine
// type.
template <class F, class A> Point<F> msm(const std::vector<A> &p, const std::vector<HFr> &s_mont) {
  size_t n = p.size() < s_mont.size() ? p.size() : s_mont.size();
  std::vector<HFr> s(n);
  std::vector<Point<F>> q(n);
  for (size_t i = 0; i < n; i++) {
    s[i] = s_mont[i].from_mont();
    q[i] = Point<F>::from(p[i]);
  }
  Point<F> acc = Point<F>::infinity();
  for (int bit = 255; bit >= 0; bit--) {
    acc = dbl(acc);
    for (size_t i = 0; i < n; i++)
      if ((s[i].v[bit / 64] >> (bit % 64)) & 1) acc = add(acc, q[i]);
  }
  return acc;
}

// on_curve: y² = x³ + b, with b = 4 for G1 (F = HFp) and 4(1 + u) for G2
// (F = HFp2). Infinity is on the curve.
inline HFp curve_b(const HFp *) { return HFp::one().dbl().dbl(); }
inline HFp2 curve_b(const HFp2 *) {
  HFp four = HFp::one().dbl().dbl();
  return HFp2{four, four};
}
template <class F> bool on_curve(const Point<F> &p) {
  if (p.inf) return true;
  return p.y * p.y == p.x * p.x * p.x + curve_b((const F *)nullptr);
}

} // namespace ref
} // namespace pb

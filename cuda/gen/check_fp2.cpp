// check_fp2.cpp — checks the CUDA code's Fp2 (fp2.cuh) and its G2 curve
// formulas (curve.cuh over Fp2) on the host, with g++ and no GPU, against
// gnark-crypto's values in cuda/gen/testdata/fp2_g2_vectors.txt (written
// and kept equal to gnark-crypto by prover/gpu's
// TestFp2G2VectorsAreGnarkCrypto):
//
//   mul, sqr, inv   E2 Mul, Square, Inverse, in both forms the headers
//                   offer: 64-bit words (the host's HFp2) and 32-bit words
//                   (DFp2, the device's type, here through the same C++
//                   CIOS product the device's PTX product replaces);
//   add, dbl        G2 affine addition and doubling through XYZZ: madd
//                   (add_affine, with its P = Q and P = −Q branches), add,
//                   dbl, dbl_affine, to_affine and to_jacobian;
//   smul            k·P by double-and-add in XYZZ (the self-test's host
//                   reference for device MSMs above 128 terms; below, it
//                   uses ref_affine.h, checked by check_ref_affine.cpp),
//                   for k = 0, r − 1 and random k; and mul_small on the
//                   low bits.
//
// Every point read is also checked to lie on y² = x³ + 4(1 + u).
//
//   g++ -O2 -std=c++17 -I cuda -o build/check_fp2 cuda/gen/check_fp2.cpp && build/check_fp2 cuda/gen/testdata/fp2_g2_vectors.txt
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "curve.cuh"
#include "vectors.h"

using namespace pb;

typedef Affine<HFp2> HA2;
typedef XYZZ<HFp2> HX2;
typedef Affine<DFp2> DA2;
typedef XYZZ<DFp2> DX2;

using vectors::checks;
using vectors::expect;
using vectors::failures;
using vectors::Reader;

// to_device reinterprets a host value as the device type: the same bytes
// (gnark-crypto's layout) read as 32-bit words.
template <class D, class H> static D to_device(const H &h) {
  static_assert(sizeof(D) == sizeof(H), "same layout");
  D d;
  memcpy(&d, &h, sizeof d);
  return d;
}
template <class H, class D> static H to_host(const D &d) {
  static_assert(sizeof(D) == sizeof(H), "same layout");
  H h;
  memcpy(&h, &d, sizeof h);
  return h;
}

static bool on_curve(const HA2 &p) {
  if (p.is_inf()) return true;
  HFp four = HFp::one().dbl().dbl();
  HFp2 b{four, four}; // 4(1 + u)
  return p.y.sqr() == p.x.sqr() * p.x + b;
}

static bool same(const HA2 &a, const HA2 &b) { return a.x == b.x && a.y == b.y; }

// affine of a gnark-crypto-layout Jacobian point: (X/Z², Y/Z³).
static HA2 jac_to_affine(const Jacobian<HFp2> &j) {
  if (j.z.is_zero()) return HA2{HFp2::zero(), HFp2::zero()};
  HFp2 zi = j.z.inverse(), zi2 = zi.sqr();
  return HA2{j.x * zi2, j.y * zi2 * zi};
}

// smul is the self-test's reference k·P (k in Montgomery form).
template <class X> static X smul(const X &p, const HFr &k_mont) {
  HFr k = k_mont.from_mont();
  X acc = X::inf();
  for (int i = 255; i >= 0; i--) {
    acc = acc.dbl();
    if ((k.v[i / 64] >> (i % 64)) & 1) acc = acc.add(p);
  }
  return acc;
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "cuda/gen/testdata/fp2_g2_vectors.txt";
  int cases = 0;
  bool read = vectors::each_case(path, [&](const std::string &op, Reader &r, int lineno) {
    cases++;
    if (op == "mul") {
      HFp2 a = r.fp2(), b = r.fp2(), want = r.fp2();
      expect(r.ok, "parse", lineno);
      expect(a * b == want, "host Fp2 a·b", lineno);
      expect(to_host<HFp2>(to_device<DFp2>(a) * to_device<DFp2>(b)) == want, "32-bit Fp2 a·b", lineno);
      expect(b * a == want, "host Fp2 b·a", lineno);
    } else if (op == "sqr") {
      HFp2 a = r.fp2(), want = r.fp2();
      expect(r.ok, "parse", lineno);
      expect(a.sqr() == want, "host Fp2 a²", lineno);
      expect(to_host<HFp2>(to_device<DFp2>(a).sqr()) == want, "32-bit Fp2 a²", lineno);
      expect(a * a == want, "host Fp2 a·a = a²", lineno);
    } else if (op == "inv") {
      HFp2 a = r.fp2(), want = r.fp2();
      expect(r.ok, "parse", lineno);
      expect(a.inverse() == want, "host Fp2 1/a", lineno);
      expect(a.is_zero() || a * want == HFp2::one(), "a · (1/a) = 1", lineno);
      // add, sub, neg and dbl against each other
      HFp2 s = a + want, d = a - want;
      expect(s - want == a && d + want == a && a.dbl() == a + a && (a + a.neg()).is_zero(), "add, sub, dbl, neg", lineno);
      DFp2 da = to_device<DFp2>(a), dw = to_device<DFp2>(want);
      expect(to_host<HFp2>(da + dw) == s && to_host<HFp2>(da - dw) == d && to_host<HFp2>(da.neg()) == a.neg(),
             "32-bit add, sub, neg", lineno);
    } else if (op == "add") {
      HA2 p = r.g2(), q = r.g2(), want = r.g2();
      expect(r.ok, "parse", lineno);
      expect(on_curve(p) && on_curve(q) && on_curve(want), "points on the curve", lineno);
      HX2 xp = HX2::from_affine(p), xq = HX2::from_affine(q);
      expect(same(xp.add_affine(q).to_affine(), want), "XYZZ + affine (madd)", lineno);
      expect(same(xp.add(xq).to_affine(), want), "XYZZ + XYZZ (add)", lineno);
      // A point with ZZ ≠ 1: 2P − P = P, then + Q.
      if (!p.is_inf()) {
        HX2 p2 = xp.dbl().add_affine(p.neg());
        expect(same(p2.add_affine(q).to_affine(), want), "(2P − P) + Q with ZZ ≠ 1", lineno);
        expect(same(jac_to_affine(p2.add(xq).to_jacobian()), want), "to_jacobian (G2Jac layout)", lineno);
      }
      // the device type on the host
      DX2 dp = DX2::from_affine(to_device<DA2>(p));
      expect(same(to_host<HA2>(dp.add_affine(to_device<DA2>(q)).to_affine()), want), "32-bit XYZZ + affine", lineno);
    } else if (op == "dbl") {
      HA2 p = r.g2(), want = r.g2();
      expect(r.ok, "parse", lineno);
      expect(on_curve(want), "2P on the curve", lineno);
      HX2 xp = HX2::from_affine(p);
      expect(same(xp.dbl().to_affine(), want), "XYZZ dbl", lineno);
      if (!p.is_inf()) expect(same(HX2::dbl_affine(p).to_affine(), want), "dbl_affine (mdbl)", lineno);
      expect(same(xp.add_affine(p).to_affine(), want), "P + P through madd's doubling branch", lineno);
      expect(same(xp.mul_small(2).to_affine(), want), "mul_small(2)", lineno);
      DX2 dp = DX2::from_affine(to_device<DA2>(p));
      expect(same(to_host<HA2>(dp.dbl().to_affine()), want), "32-bit XYZZ dbl", lineno);
    } else if (op == "smul") {
      HFr k = r.fr();
      HA2 p = r.g2(), want = r.g2();
      expect(r.ok, "parse", lineno);
      HX2 got = smul(HX2::from_affine(p), k);
      expect(same(got.to_affine(), want), "k·P by double-and-add", lineno);
      HFr ks = k.from_mont();
      uint32_t lo = (uint32_t)(ks.v[0] & 0xfff);
      HX2 part = HX2::from_affine(p).mul_small(lo), ref = smul(HX2::from_affine(p), hfr_to_mont([&] {
                                                       HFr x = HFr::zero();
                                                       x.v[0] = lo;
                                                       return x;
                                                     }()));
      expect(same(part.to_affine(), ref.to_affine()), "mul_small(k mod 2^12) = double-and-add", lineno);
    } else {
      expect(false, "unknown op " + op, lineno);
    }
  });
  if (!read) {
    fprintf(stderr, "check_fp2: cannot read %s\n", path);
    return 2;
  }
  printf("check_fp2: %d cases, %d checks, %d failures (%s)\n", cases, checks, failures, path);
  return failures || cases == 0 ? 1 : 0;
}

// check_ref_affine.cpp — checks the self-test's independent MSM reference
// (ref_affine.h: the affine group law and double-and-add) on the host,
// with g++ and no GPU:
//
//   G2   against gnark-crypto's values in cuda/gen/testdata/
//        fp2_g2_vectors.txt (add P Q P+Q, dbl P 2P, smul k P k·P; the file's
//        Fp2 lines are check_fp2.cpp's), every point read on the curve;
//   G1   against values of gnark-crypto v0.22.0 written here (2G, 3G and
//        k·G for a fixed 255-bit k: G1Affine Double, Add and
//        ScalarMultiplication), against the group order (r·G = ∞,
//        (r − 1)·G = −G, (r + 1)·G = G), and against curve.cuh's XYZZ
//        formulas on random points and scalars (for which no gnark-crypto
//        G1 vectors are checked in);
//   both the law's special cases: P + ∞, ∞ + P, P + (−P), P + P, 2·∞, the
//        MSM (ref::msm) against a sum of scalar multiples, and the
//        Jacobian comparison and conversion the self-test reads the
//        device's results with.
//
//   g++ -O2 -std=c++17 -I cuda -o build/check_ref_affine cuda/gen/check_ref_affine.cpp && build/check_ref_affine cuda/gen/testdata/fp2_g2_vectors.txt
#include <cstdio>
#include <cstring>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "curve.cuh"
#include "vectors.h"
#include "host_inputs.h"
#include "ref_affine.h"

using namespace pb;

typedef ref::Point<HFp> R1;
typedef ref::Point<HFp2> R2;

using vectors::checks;
using vectors::expect;
using vectors::failures;
using vectors::Reader;

static int check_vectors(const char *path) {
  int cases = 0;
  bool read = vectors::each_case(path, [&](const std::string &op, Reader &r, int lineno) {
    if (op == "add") {
      R2 p = R2::from(r.g2()), q = R2::from(r.g2()), want = R2::from(r.g2());
      expect(r.ok, "parse", lineno);
      expect(ref::on_curve(p) && ref::on_curve(q) && ref::on_curve(want), "points on the curve", lineno);
      expect(ref::add(p, q) == want, "affine P + Q", lineno);
      expect(ref::add(q, p) == want, "affine Q + P", lineno);
      expect(ref::add(ref::add(p, q), q.neg()) == p, "(P + Q) − Q = P", lineno);
      cases++;
    } else if (op == "dbl") {
      R2 p = R2::from(r.g2()), want = R2::from(r.g2());
      expect(r.ok, "parse", lineno);
      expect(ref::on_curve(want), "2P on the curve", lineno);
      expect(ref::dbl(p) == want, "affine 2P", lineno);
      expect(ref::add(p, p) == want, "affine P + P (the doubling branch)", lineno);
      cases++;
    } else if (op == "smul") {
      HFr k = r.fr();
      R2 p = R2::from(r.g2()), want = R2::from(r.g2());
      expect(r.ok, "parse", lineno);
      expect(ref::mul(p, k) == want, "affine k·P by double-and-add", lineno);
      cases++;
    }
  });
  if (!read) {
    fprintf(stderr, "check_ref_affine: cannot read %s\n", path);
    return -1;
  }
  return cases;
}

// --- G1 ---

static R1 g1_hex(const char *x, const char *y) { return R1{fp_hex(x), fp_hex(y), false}; }

// The group order r, standard form, low word first.
static const uint64_t kR[4] = {0xffffffff00000001ull, 0x53bda402fffe5bfeull, 0x3339d80809a1d805ull,
                               0x73eda753299d7d48ull};

static HFr rand_fr(std::mt19937_64 &rng) {
  HFr x;
  for (auto &w : x.v) w = rng();
  x.v[3] &= 0x0fffffffffffffffull; // below r; any value is a scalar, uniformity is not needed here
  return hfr_to_mont(x);
}

static R1 from_xyzz(const XYZZ<HFp> &p) { return R1::from(p.to_affine()); }

static XYZZ<HFp> xyzz_mul(const XYZZ<HFp> &p, const HFr &k_mont) {
  HFr k = k_mont.from_mont();
  XYZZ<HFp> acc = XYZZ<HFp>::inf();
  for (int i = 255; i >= 0; i--) {
    acc = acc.dbl();
    if ((k.v[i / 64] >> (i % 64)) & 1) acc = acc.add(p);
  }
  return acc;
}

static void check_g1() {
  R1 g = g1_hex(kG1X, kG1Y);
  expect(ref::on_curve(g), "G1 generator on the curve");
  // gnark-crypto v0.22.0: G1Affine.Double(G), Add(2G, G), and
  // ScalarMultiplication(G, k) for k = 0x1234567890abcdef repeated 4 times.
  R1 g2 = g1_hex("0572cbea904d67468808c8eb50a9450c9721db309128012543902d0ac358a62ae28f75bb8f1c7c42c39a8c5529bf0f4e",
                 "166a9d8cabc673a322fda673779d8e3822ba3ecb8670e461f73bb9021d5fd76a4c56d9d4cd16bd1bba86881979749d28");
  R1 g3 = g1_hex("09ece308f9d1f0131765212deca99697b112d61f9be9a5f1f3780a51335b3ff981747a0b2ca2179b96d2c0c9024e5224",
                 "032b80d3a6f5b09f8a84623389c5f80ca69a0cddabc3097f9d9c27310fd43be6e745256c634af45ca3473b0590ae30d1");
  R1 gk = g1_hex("172a59075fca0729b40b2cea5bb9685afdd219e77407e13631664c53b847cdcad45ab174a073aaa4122ad813fa094485",
                 "028e53b49dfb3b48ebd12df0158912b6a5036da6204a58275b9ad64acc45e372b0dff305bb6134f9d350a89f75e65ab7");
  const uint64_t k[4] = {0x1234567890abcdefull, 0x1234567890abcdefull, 0x1234567890abcdefull, 0x1234567890abcdefull};
  expect(ref::on_curve(g2) && ref::on_curve(g3) && ref::on_curve(gk), "G1 gnark-crypto values on the curve");
  expect(ref::dbl(g) == g2, "G1 affine 2G = gnark-crypto's");
  expect(ref::add(g, g) == g2, "G1 affine G + G = gnark-crypto's 2G");
  expect(ref::add(g2, g) == g3 && ref::add(g, g2) == g3, "G1 affine 2G + G = gnark-crypto's 3G");
  expect(ref::mul_words(g, k, 4) == gk, "G1 affine k·G = gnark-crypto's");
  HFr ks;
  memcpy(ks.v, k, sizeof ks.v);
  expect(ref::mul(g, hfr_to_mont(ks)) == gk, "G1 affine k·G from a Montgomery-form scalar = gnark-crypto's");
  expect(from_xyzz(xyzz_mul(XYZZ<HFp>::from_affine(g.to_layout<Affine<HFp>>()), hfr_to_mont(ks))) == gk,
         "G1 XYZZ k·G = gnark-crypto's");

  // The group order: r·G = ∞, (r − 1)·G = −G, (r + 1)·G = G.
  uint64_t r[4], rm1[4], rp1[4];
  memcpy(r, kR, sizeof r);
  memcpy(rm1, kR, sizeof r);
  memcpy(rp1, kR, sizeof r);
  rm1[0] -= 1; // r_0 = 2^64 − 2^32 + 1: no borrow, no carry
  rp1[0] += 1;
  expect(ref::mul_words(g, r, 4).inf, "G1 r·G = ∞");
  expect(ref::mul_words(g, rm1, 4) == g.neg(), "G1 (r − 1)·G = −G");
  expect(ref::mul_words(g, rp1, 4) == g, "G1 (r + 1)·G = G");

  // Special cases of the law.
  R1 inf = R1::infinity();
  expect(ref::add(g, inf) == g && ref::add(inf, g) == g && ref::add(inf, inf).inf, "G1 P + ∞ = ∞ + P = P, ∞ + ∞ = ∞");
  expect(ref::add(g, g.neg()).inf && ref::add(g3.neg(), g3).inf, "G1 P + (−P) = ∞");
  expect(ref::dbl(inf).inf && ref::mul_words(inf, k, 4).inf, "G1 2·∞ = k·∞ = ∞");
  expect(ref::mul(g, HFr::zero()).inf, "G1 0·G = ∞");
  expect(R1::from(Affine<HFp>{HFp::zero(), HFp::zero()}).inf && inf.to_layout<Affine<HFp>>().is_inf(),
         "G1 (0, 0) is ∞ both ways");

  // Against curve.cuh's XYZZ formulas on random points and scalars.
  std::mt19937_64 rng(20);
  std::vector<Affine<HFp>> pts;
  std::vector<HFr> sc;
  for (int i = 0; i < 6; i++) {
    HFr a = rand_fr(rng), b = rand_fr(rng);
    R1 p = ref::mul(g, a), q = ref::mul(g, b);
    XYZZ<HFp> xp = XYZZ<HFp>::from_affine(p.to_layout<Affine<HFp>>());
    XYZZ<HFp> xq = XYZZ<HFp>::from_affine(q.to_layout<Affine<HFp>>());
    std::string at = " (random " + std::to_string(i) + ")";
    expect(ref::on_curve(p) && ref::on_curve(q), "G1 k·G on the curve" + at);
    expect(from_xyzz(xyzz_mul(XYZZ<HFp>::from_affine(g.to_layout<Affine<HFp>>()), a)) == p, "G1 k·G: XYZZ = affine" + at);
    expect(from_xyzz(xp.add(xq)) == ref::add(p, q), "G1 P + Q: XYZZ = affine" + at);
    expect(from_xyzz(xp.dbl()) == ref::dbl(p), "G1 2P: XYZZ = affine" + at);
    expect(ref::add(p, q) == ref::mul(g, a + b), "G1 a·G + b·G = (a + b)·G" + at);
    expect(ref::mul(p, b) == ref::mul(q, a), "G1 b·(a·G) = a·(b·G)" + at);
    pts.push_back(p.to_layout<Affine<HFp>>());
    sc.push_back(b);
  }

  // The MSM: ref::msm's interleaved double-and-add against a plain sum of
  // scalar multiples, with ∞, a repeated point and its negation among the
  // terms.
  pts.push_back(Affine<HFp>{HFp::zero(), HFp::zero()});
  sc.push_back(rand_fr(rng));
  pts.push_back(pts[0]);
  sc.push_back(sc[3]);
  pts.push_back(pts[1].neg());
  sc.push_back(sc[1]);
  R1 sum = R1::infinity();
  for (size_t i = 0; i < pts.size(); i++) sum = ref::add(sum, ref::mul(R1::from(pts[i]), sc[i]));
  expect(ref::msm<HFp>(pts, sc) == sum, "G1 msm = Σ s_i·P_i");
  expect(ref::msm<HFp>(std::vector<Affine<HFp>>{}, std::vector<HFr>{}).inf, "G1 empty msm = ∞");

  // Jacobian: what the self-test reads the device's results with.
  R1 p = ref::mul(g, rand_fr(rng));
  HFp z = fp_hex("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef");
  Jacobian<HFp> j{p.x * z * z, p.y * z * z * z, z};
  expect(p.equals_jacobian(j) && ref::from_jacobian<HFp>(j) == p, "G1 Jacobian (x·Z², y·Z³, Z) = (x, y)");
  Jacobian<HFp> j2 = j;
  j2.x = j2.x + HFp::one();
  expect(!p.equals_jacobian(j2), "G1 Jacobian with X off by one ≠ (x, y)");
  expect(!p.equals_jacobian(Jacobian<HFp>{j.x, j.y.neg(), j.z}) && p.neg().equals_jacobian(Jacobian<HFp>{j.x, j.y.neg(), j.z}),
         "G1 Jacobian of −P ≠ P, = −P");
  Jacobian<HFp> ji{HFp::one(), HFp::one(), HFp::zero()};
  expect(R1::infinity().equals_jacobian(ji) && !p.equals_jacobian(ji) && ref::from_jacobian<HFp>(ji).inf,
         "G1 Jacobian Z = 0 is ∞");
  expect(p.equals_jacobian(XYZZ<HFp>::from_affine(p.to_layout<Affine<HFp>>()).dbl().add_affine(p.neg().to_layout<Affine<HFp>>()).to_jacobian()),
         "G1 curve.cuh to_jacobian of 2P − P = P");
}

// --- G2 beyond the vectors ---

static void check_g2_order() {
  const char *const *h = kG2;
  R2 g{HFp2{fp_hex(h[0]), fp_hex(h[1])}, HFp2{fp_hex(h[2]), fp_hex(h[3])}, false};
  expect(ref::on_curve(g), "G2 generator on the curve");
  uint64_t r[4], rm1[4];
  memcpy(r, kR, sizeof r);
  memcpy(rm1, kR, sizeof r);
  rm1[0] -= 1;
  expect(ref::mul_words(g, r, 4).inf, "G2 r·G = ∞");
  expect(ref::mul_words(g, rm1, 4) == g.neg(), "G2 (r − 1)·G = −G");
  expect(ref::add(g, g.neg()).inf && ref::add(g, R2::infinity()) == g, "G2 P + (−P) = ∞, P + ∞ = P");
  std::mt19937_64 rng(21);
  std::vector<Affine<HFp2>> pts;
  std::vector<HFr> sc;
  R2 sum = R2::infinity();
  for (int i = 0; i < 6; i++) {
    R2 p = ref::mul(g, rand_fr(rng));
    HFr s = rand_fr(rng);
    pts.push_back(p.to_layout<Affine<HFp2>>());
    sc.push_back(s);
    sum = ref::add(sum, ref::mul(p, s));
  }
  expect(ref::msm<HFp2>(pts, sc) == sum, "G2 msm = Σ s_i·P_i");
  HFp2 z{fp_hex("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"),
         HFp::one()};
  Jacobian<HFp2> j{sum.x * z * z, sum.y * z * z * z, z};
  expect(sum.equals_jacobian(j) && ref::from_jacobian<HFp2>(j) == sum, "G2 Jacobian (x·Z², y·Z³, Z) = (x, y)");
}

int main(int argc, char **argv) {
  const char *path = argc > 1 ? argv[1] : "cuda/gen/testdata/fp2_g2_vectors.txt";
  int cases = check_vectors(path);
  if (cases < 0) return 2;
  check_g1();
  check_g2_order();
  printf("check_ref_affine: %d G2 vector cases, %d checks, %d failures (%s)\n", cases, checks, failures, path);
  return failures || cases == 0 ? 1 : 0;
}

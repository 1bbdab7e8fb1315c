// vectors.h — what the host checks (check_fp2.cpp, check_ref_affine.cpp)
// share: their pass/fail count, and a reader of testdata/fp2_g2_vectors.txt
// lines (format: check_fp2.cpp), whose values are gnark-crypto's limbs as
// 16 hex digits each, least significant limb first.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "curve.cuh"

namespace pb {
namespace vectors {

inline int failures = 0, checks = 0;

// expect counts a check and prints the first 20 failures.
inline void expect(bool ok, const std::string &what, int line = 0) {
  checks++;
  if (ok) return;
  failures++;
  if (failures <= 20) printf("FAIL line %d: %s\n", line, what.c_str());
}

// parse_words reads n 64-bit limbs, 16 hex digits each, from tok.
inline bool parse_words(const std::string &tok, uint64_t *w, int n) {
  if ((int)tok.size() != 16 * n) return false;
  for (int i = 0; i < n; i++) {
    char buf[17];
    memcpy(buf, tok.data() + 16 * i, 16);
    buf[16] = 0;
    char *end;
    w[i] = strtoull(buf, &end, 16);
    if (*end) return false;
  }
  return true;
}

// A Reader takes a line's values in order; ok turns false at the first
// value that is missing or malformed.
struct Reader {
  std::istringstream in;
  bool ok = true;
  explicit Reader(const std::string &line) : in(line) {}
  HFp fp() {
    std::string t;
    HFp x = HFp::zero();
    if (!(in >> t) || !parse_words(t, x.v, 6)) ok = false;
    return x;
  }
  HFp2 fp2() {
    HFp a = fp();
    HFp b = fp();
    return HFp2{a, b};
  }
  Affine<HFp2> g2() {
    HFp2 x = fp2();
    HFp2 y = fp2();
    return Affine<HFp2>{x, y};
  }
  HFr fr() {
    std::string t;
    HFr x = HFr::zero();
    if (!(in >> t) || !parse_words(t, x.v, 4)) ok = false;
    return x;
  }
};

// each_case calls f(op, r, lineno) for each case line of the vectors file
// at path (blank lines and # comments skipped), r positioned after the
// line's op. It returns false when the file cannot be read.
template <class F> bool each_case(const char *path, F f) {
  std::ifstream in(path);
  if (!in) return false;
  std::string line;
  int lineno = 0;
  while (std::getline(in, line)) {
    lineno++;
    if (line.empty() || line[0] == '#') continue;
    Reader r(line);
    std::string op;
    r.in >> op;
    f(op, r, lineno);
  }
  return true;
}

} // namespace vectors
} // namespace pb

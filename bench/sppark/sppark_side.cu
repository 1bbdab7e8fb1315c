// sppark_side.cu — sppark's BLS12-381 G1 MSM and Fr NTT instantiated the
// way its own proof of concept does it (poc/msm-cuda/cuda/pippenger.cu:
// FEATURE_BLS12_381, Jacobian results, XYZZ buckets, affine points without
// an infinity flag), behind sppark_side.h. Built only by `make bench-sppark`
// with sppark's tree and blst's on the include path: on the host, sppark's
// fp_t and fr_t are blst's blst_384_t and blst_256_t (ff/bls12-381.hpp
// includes blst_t.hpp), whose arithmetic is blst's assembly, so this links
// to libblst.a. msm_t finishes each MSM on the host (the windows' sums,
// Horner's rule) with that arithmetic.
#include <cuda_runtime.h>

#include <cstdlib>
#include <cstring>
#include <memory>

#include <ff/bls12-381.hpp>

#include <ec/jacobian_t.hpp>
#include <ec/xyzz_t.hpp>

// The names msm/pippenger.cuh instantiates its kernels with.
typedef jacobian_t<fp_t> point_t;
typedef xyzz_t<fp_t> bucket_t;
typedef bucket_t::affine_t affine_t;
typedef fr_t scalar_t;

#include <msm/pippenger.cuh>
#include <ntt/ntt.cuh>

#include "sppark_side.h"

// The layouts sppark_side.h promises: the same bytes as gnark-crypto's
// (and so as perfbot_cuda.h's). Host types are blst's vec384 / vec256
// limbs, Montgomery form with R = 2^384 and 2^256 like gnark-crypto's.
static_assert(sizeof(fp_t) == 48 && sizeof(fr_t) == 32, "Fp and Fr sizes");
static_assert(sizeof(affine_t) == 96, "G1 affine is x, y");
static_assert(sizeof(point_t) == 144, "G1 Jacobian is X, Y, Z");

namespace spk {

typedef msm_t<bucket_t, point_t, affine_t, scalar_t> msm_g1;

struct Msm {
  std::unique_ptr<msm_g1> m;
  size_t n;
};

// take returns a RustError's message and frees it (sppark strdup's it
// for Rust to own when built with TAKE_RESPONSIBILITY_FOR_ERROR_MESSAGE).
static std::string take(RustError &e, const char *what) {
  std::string s = std::string(what) + ": sppark error " + std::to_string(e.code);
  if (e.message) {
    s += ": ";
    s += e.message;
    free(e.message);
    e.message = nullptr;
  }
  return s;
}

Msm *msm_new(const void *points, size_t n, std::string *err) {
  try {
    std::unique_ptr<Msm> m(new Msm{nullptr, n});
    m->m.reset(new msm_g1(static_cast<const affine_t *>(points), n));
    // The constructor's copy is asynchronous on sppark's own non-blocking
    // stream; the MSMs run on others, so wait for it here.
    select_gpu(-1).sync();
    return m.release();
  } catch (const std::exception &e) {
    *err = std::string("sppark msm_t: ") + e.what();
    return nullptr;
  }
}

bool msm_run(Msm *m, const void *scalars, size_t n, void *out, std::string *err) {
  if (n > m->n) {
    *err = "sppark msm: more scalars than points";
    return false;
  }
  try {
    point_t r;
    // points = nullptr: msm_t reads the points its constructor uploaded.
    RustError e = m->m->invoke(r, static_cast<const affine_t *>(nullptr), n,
                               static_cast<const scalar_t *>(scalars), true);
    if (e.code != 0) {
      *err = take(e, "sppark msm_t::invoke");
      return false;
    }
    memcpy(out, &r, sizeof r);
    return true;
  } catch (const std::exception &e) {
    *err = std::string("sppark msm_t::invoke: ") + e.what();
    return false;
  }
}

void msm_free(Msm *m) { delete m; }

int msm_window_bits(size_t n) {
  // msm_t's constructor (msm/pippenger.cuh) on npoints rounded up to a
  // multiple of 32: 17 for none, 10 up to 192, else lg(1.5·n) − 8
  // clamped to [10, 18].
  size_t np = (n + 31) & ~size_t(31);
  if (np == 0) return 17;
  if (np <= 192) return 10;
  int lg = 0;
  for (size_t v = np + np / 2; v >>= 1;) lg++;
  int w = lg - 8;
  return w < 10 ? 10 : w > 18 ? 18 : w;
}

bool ntt_forward(void *d_data, int log_n, std::string *err) {
  if (log_n < 1 || log_n > MAX_LG_DOMAIN_SIZE) {
    *err = "sppark ntt: log_n out of range";
    return false;
  }
  try {
    const gpu_t &gpu = select_gpu(-1);
    NTT::Base_dev_ptr(gpu, static_cast<fr_t *>(d_data), log_n, NTT::InputOutputOrder::NN, NTT::Direction::forward,
                      NTT::Type::standard);
    gpu.sync();
    return true;
  } catch (const std::exception &e) {
    *err = std::string("sppark NTT::Base_dev_ptr: ") + e.what();
    return false;
  }
}

void ntt_root(int log_n, void *out) { memcpy(out, &forward_roots_of_unity[log_n], sizeof(fr_t)); }

int ntt_max_log_n() { return MAX_LG_DOMAIN_SIZE; }

#ifndef SPPARK_COMMIT
#define SPPARK_COMMIT "unknown"
#endif
const char *commit() { return SPPARK_COMMIT; }

} // namespace spk

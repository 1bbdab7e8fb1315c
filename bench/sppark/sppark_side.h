// sppark_side.h — what side_by_side.cu times of sppark (supranational/
// sppark, Apache-2.0): its BLS12-381 G1 MSM and Fr NTT, behind plain bytes.
// sppark's headers put fp_t, fr_t, point types and macros (asm, inline on
// the device) at global scope, and the host half of its field types is
// blst's; ours put the same ideas in namespace pb. So the two never share
// a translation unit: sppark_side.cu includes sppark alone, and this header
// includes neither.
//
// Bytes cross in the ABI's layouts (perfbot_cuda.h), which are sppark's
// too for BLS12-381 (checked by static_assert in sppark_side.cu): an Fr
// element 32 bytes, 4 × u64 little-endian, Montgomery form (R = 2^256); a
// G1 affine point 96 bytes, x then y, each 6 × u64 little-endian,
// Montgomery form (R = 2^384), infinity as (0, 0); a G1 Jacobian point
// 144 bytes, X, Y, Z with x = X/Z², y = Y/Z³, infinity as Z = 0.
#pragma once

#include <stddef.h>

#include <string>

namespace spk {

// An Msm is sppark's msm_t holding n G1 affine points on the device: its
// constructor copies them there once, and every msm_run reads them from
// there (msm_t::invoke given no host points), as our perfbot_cuda_g1_upload
// and perfbot_cuda_msm_g1 do.
struct Msm;

// msm_new copies n points (96 bytes each) to the device; nullptr and *err
// on failure.
Msm *msm_new(const void *points, size_t n, std::string *err);

// msm_run writes Σ scalars[i]·points[i], i < n (n at most msm_new's), to
// out (144 bytes, Jacobian). The scalars are read from host memory in
// Montgomery form (msm_t's mont = true: its digit kernel converts them).
// It returns when the result is on the host.
bool msm_run(Msm *m, const void *scalars, size_t n, void *out, std::string *err);

void msm_free(Msm *m);

// msm_window_bits is the window msm_t picks for n points. msm_t keeps its
// choice private, so this restates its constructor's rule; it is reported
// beside the timings, not used to run anything.
int msm_window_bits(size_t n);

// ntt_forward transforms 2^log_n elements in place on the device, natural
// order in and out (sppark's NTT::Base_dev_ptr, InputOutputOrder::NN,
// forward, standard), and returns when the device is done.
bool ntt_forward(void *d_data, int log_n, std::string *err);

// ntt_root copies sppark's primitive 2^log_n-th root of unity
// (forward_roots_of_unity[log_n], 32 bytes, Montgomery form) to out.
// ntt_max_log_n is the largest log_n its NTT takes (MAX_LG_DOMAIN_SIZE).
void ntt_root(int log_n, void *out);
int ntt_max_log_n();

// commit is the sppark commit this was built from (the Makefile's
// SPPARK_COMMIT: the tree's COMMIT file, which bench/sppark.sh pack writes).
const char *commit();

} // namespace spk

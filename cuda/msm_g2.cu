// msm_g2.cu — the G2 MSM (points over Fp2): msm_run.cuh's steps and
// msm.cuh's kernels instantiated for DFp2, the library's longest compile
// (its accumulation is three times G1's code at 255 registers), so it has
// a unit of its own.
#include "msm_run.cuh"

void perfbot_cuda_ctx::msm_g2(const DAffine2 *points, const void *host_scalars, uint64_t n, int c, void *out,
                              Timer &tm) {
  msm<DFp2, HFp2>(points, host_scalars, n, c, out, tm);
}

// msm_g1.cu — the G1 MSM (points over Fp): msm_run.cuh's steps and
// msm.cuh's kernels instantiated for DFp, compiled beside the other units.
#include "msm_run.cuh"

void perfbot_cuda_ctx::msm_g1(const DAffine *points, const void *host_scalars, uint64_t n, int c, void *out,
                              Timer &tm) {
  msm<DFp, HFp>(points, host_scalars, n, c, out, tm);
}

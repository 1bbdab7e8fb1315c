/*
 * perfbot_cuda.h — the C ABI of libperfbot_cuda.so, the GPU half of
 * perfbot's Groth16 prover over BLS12-381.
 *
 * Data crosses in gnark-crypto's memory layout, Montgomery form, as
 * pointer + length: an Fr element is 32 bytes (fr.Element), a G1 affine
 * point 96 bytes (bls12381.G1Affine, infinity as (0, 0)), a G1 Jacobian
 * point 144 bytes (bls12381.G1Jac), a G2 affine point 192 bytes
 * (bls12381.G2Affine: x and y in Fp2 = fptower.E2 {A0, A1}), a G2
 * Jacobian point 288 bytes (bls12381.G2Jac). The library never keeps a
 * caller's pointer past the call that received it.
 *
 * Every function returns 0 on success or an error code, and fills *err
 * (when err is not NULL) with the code and a message. No C++ exception
 * crosses this boundary; every CUDA call inside is checked.
 *
 * A context owns one device, a stream and cached tables; its functions
 * must not be called concurrently on the same context.
 */
#ifndef PERFBOT_CUDA_H
#define PERFBOT_CUDA_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change; the Go loader refuses a mismatch. */
#define PERFBOT_CUDA_ABI_VERSION 2 /* 2: G2 points and MSM */

enum perfbot_cuda_code {
  PERFBOT_CUDA_OK = 0,
  PERFBOT_CUDA_ERR_ARGUMENT = 1, /* a bad size, a NULL pointer, a wrong handle */
  PERFBOT_CUDA_ERR_NO_DEVICE = 2, /* no CUDA device, or no driver */
  PERFBOT_CUDA_ERR_CUDA = 3,     /* a CUDA call failed: the message names it */
  PERFBOT_CUDA_ERR_MEMORY = 4,   /* device or pinned host memory ran out */
  PERFBOT_CUDA_ERR_INTERNAL = 5  /* anything else */
};

typedef struct {
  int32_t code;
  char message[512];
} perfbot_cuda_error;

/* Per-step timings of the last call, in milliseconds, from CUDA events
 * (device steps) or the host clock (host steps). */
#define PERFBOT_CUDA_MAX_TIMINGS 16
typedef struct {
  char name[32];
  double ms;
} perfbot_cuda_timing;
typedef struct {
  int32_t n;
  perfbot_cuda_timing t[PERFBOT_CUDA_MAX_TIMINGS];
} perfbot_cuda_timings;

typedef struct {
  char name[256];
  char uuid[48];
  int32_t major, minor; /* compute capability */
  int32_t multiprocessors;
  int32_t driver_version, runtime_version; /* e.g. 13000 for 13.0 */
  uint64_t total_memory;                   /* bytes */
} perfbot_cuda_device;

typedef struct perfbot_cuda_ctx perfbot_cuda_ctx;
typedef struct perfbot_cuda_points perfbot_cuda_points;

int32_t perfbot_cuda_abi_version(void);

/* The number of CUDA devices (0 with no driver: not an error). */
int32_t perfbot_cuda_device_count(int32_t *count, perfbot_cuda_error *err);
int32_t perfbot_cuda_device_info(int32_t device, perfbot_cuda_device *info, perfbot_cuda_error *err);

int32_t perfbot_cuda_open(int32_t device, perfbot_cuda_ctx **ctx, perfbot_cuda_error *err);
void perfbot_cuda_close(perfbot_cuda_ctx *ctx);

/* G1 points resident on the device: n affine points copied once, then
 * used by any number of MSMs (a proving key's queries). */
int32_t perfbot_cuda_g1_upload(perfbot_cuda_ctx *ctx, const void *points, uint64_t n,
                               perfbot_cuda_points **out, perfbot_cuda_error *err);
void perfbot_cuda_g1_free(perfbot_cuda_points *pts);

/* out (G1Jac) = Σ scalars[i]·points[offset+i] for i < n, scalars read
 * from host memory. window_bits 0 picks the window size from n. */
int32_t perfbot_cuda_msm_g1(perfbot_cuda_ctx *ctx, const perfbot_cuda_points *pts, uint64_t offset,
                            const void *scalars, uint64_t n, int32_t window_bits, void *out,
                            perfbot_cuda_timings *timings, perfbot_cuda_error *err);

/* The same for G2: n G2 affine points resident on the device, and
 * out (G2Jac) = Σ scalars[i]·points[offset+i], by the same kernels as G1
 * over Fp2. Points of one group given to the other's MSM are refused
 * (PERFBOT_CUDA_ERR_ARGUMENT). */
int32_t perfbot_cuda_g2_upload(perfbot_cuda_ctx *ctx, const void *points, uint64_t n,
                               perfbot_cuda_points **out, perfbot_cuda_error *err);
void perfbot_cuda_g2_free(perfbot_cuda_points *pts);
int32_t perfbot_cuda_msm_g2(perfbot_cuda_ctx *ctx, const perfbot_cuda_points *pts, uint64_t offset,
                            const void *scalars, uint64_t n, int32_t window_bits, void *out,
                            perfbot_cuda_timings *timings, perfbot_cuda_error *err);

/* NTT over Fr of n = 2^log_n elements in place, natural order in and out.
 *   direction  PERFBOT_NTT_FORWARD: a_j = Σ x_i ω^(ij)
 *              PERFBOT_NTT_INVERSE: x_i = n⁻¹ Σ a_j ω^(−ij)
 *   omega      a primitive n-th root of unity (Montgomery form)
 *   coset      NULL, or g: forward evaluates on g·⟨ω⟩ (x_i scaled by g^i
 *              first); inverse undoes that (scaled by g^−i after).
 * data may be host memory (copied in and out) or, with
 * PERFBOT_NTT_DEVICE_DATA, a device pointer. */
enum { PERFBOT_NTT_FORWARD = 0, PERFBOT_NTT_INVERSE = 1 };
enum { PERFBOT_NTT_DEVICE_DATA = 1 };
int32_t perfbot_cuda_ntt(perfbot_cuda_ctx *ctx, void *data, int32_t log_n, int32_t direction,
                         const void *omega, const void *coset, int32_t flags,
                         perfbot_cuda_timings *timings, perfbot_cuda_error *err);

/* Groth16's quotient on the device: a, b, c hold A, B, C evaluated on
 * ⟨ω⟩ (n = 2^log_n); on return a holds the n coefficients, lowest first,
 * of h = (A·B − C)/(x^n − 1), computed through the coset g·⟨ω⟩. b and c
 * are read only. */
int32_t perfbot_cuda_quotient(perfbot_cuda_ctx *ctx, void *a, const void *b, const void *c,
                              int32_t log_n, const void *omega, const void *coset,
                              perfbot_cuda_timings *timings, perfbot_cuda_error *err);

/* Device memory for callers that keep data resident (benchmarks). */
int32_t perfbot_cuda_alloc(perfbot_cuda_ctx *ctx, uint64_t bytes, void **dptr, perfbot_cuda_error *err);
int32_t perfbot_cuda_free(perfbot_cuda_ctx *ctx, void *dptr, perfbot_cuda_error *err);
int32_t perfbot_cuda_copy(perfbot_cuda_ctx *ctx, void *dst, const void *src, uint64_t bytes,
                          int32_t to_device, perfbot_cuda_error *err);

#ifdef __cplusplus
}
#endif

#endif /* PERFBOT_CUDA_H */

// Package gpu is the prover's CUDA backend: it loads libperfbot_cuda.so
// (built by `make cuda` from cuda/) at run time with dlopen, so the perfbot
// binary builds and runs without the CUDA toolkit, and it offers a
// groth16.Engine whose G1 and G2 MSMs and quotient (the ntt phase) run
// on the GPU; with PERFBOT_G2=host the G2 MSM runs on the host's cores
// beside the G1 MSMs instead (EnvG2, Engine.SetG2OnDevice).
//
// Where the library comes from, first match wins: an explicit path
// (--cuda-lib), the PERFBOT_CUDA_LIB environment variable, then
// libperfbot_cuda.so next to the running executable.
//
// Data crosses the C ABI (cuda/perfbot_cuda.h) in gnark-crypto's own
// memory layout, Montgomery form, pointer and length only; the library
// keeps no Go pointer past a call.
package gpu

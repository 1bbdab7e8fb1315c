#!/usr/bin/env bash
# cuda.sh [OUTDIR] [MAXLOG] — on the GPU machine: build the CUDA library,
# check it, time it. Writes the compiler's resource report, the check log
# and the timing table under OUTDIR (default build/cuda-bench).
#
#   MAXLOG   the largest MSM size, as a power of two (default 24)
#   SKIP_CHECK=1 times without checking first
set -uo pipefail
out=${1:-build/cuda-bench}
maxlog=${2:-24}
mkdir -p "$out"
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
t0=$(date +%s)
if ! make -j4 cuda NVFLAGS="-O3 -std=c++17 -arch=${CUDA_ARCH:-sm_90} -lineinfo -Xptxas -v" > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; echo "cuda.sh: build failed (log: $out/build.log)"; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
grep -E "Compiling entry|registers|spill" "$out/build.log" | grep -B1 -E "spill stores [1-9]|registers" | sed -n '1,60p' > "$out/resources.txt"
grep -A2 -E "Compiling entry function '_ZN2pb(14msm_accumulate|12ntt_dif_pass|19msm_reduce_segments)" "$out/build.log" | head -20
status=0
if [ -z "${SKIP_CHECK:-}" ]; then
  build/perfbot_cuda_selftest check > "$out/check.log" 2>&1; status=$?
  grep -c '^ok' "$out/check.log" | sed 's/^/checks passed: /'
  grep -E '^FAIL|failures' "$out/check.log"
fi
build/perfbot_cuda_selftest bench "$maxlog" 2>&1 | tee "$out/bench.txt" | tail -20
exit $status

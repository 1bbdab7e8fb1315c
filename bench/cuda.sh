#!/usr/bin/env bash
# cuda.sh [OUTDIR] [MAXLOG] — on the GPU machine: build the CUDA library,
# check it, time it. Writes the compiler's resource report, the check log
# and the timing table under OUTDIR (default build/cuda-bench).
#
#   MAXLOG   the largest MSM size, as a power of two (default 24)
#   SKIP_CHECK=1 times without checking first; SKIP_BENCH=1 checks only
#
# The GPU machine has no Go: build the Go side here first and carry it,
#   go build -o build/go/perfbot ./cmd/perfbot
#   go test -c -o build/go/gpu.test ./prover/gpu
# and this script also runs the Go tests against gnark-crypto and times
# whole proofs, CPU backend against GPU backend, at PROVE_SIZES (default
# "2^20"), PROVE_COUNT proofs each (default 3).
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
[ -z "${SKIP_BENCH:-}" ] && build/perfbot_cuda_selftest bench "$maxlog" 2>&1 | tee "$out/bench.txt" | tail -20
lib=$PWD/build/libperfbot_cuda.so
if [ -x build/go/gpu.test ]; then
  PERFBOT_CUDA_LIB=$lib build/go/gpu.test -test.v -test.count=1 -test.timeout 20m > "$out/gotest.log" 2>&1 || status=1
  grep -E "^(--- |ok|FAIL|PASS)" "$out/gotest.log"
fi
if [ -x build/go/perfbot ]; then
  for size in ${PROVE_SIZES-2^20}; do
    for backend in cpu gpu; do
      f="$out/prove-${size/^/_}-$backend.txt"
      build/go/perfbot prove --backend "$backend" --cuda-lib "$lib" --constraints "$size" --srs random \
        --count "${PROVE_COUNT:-3}" --warmup 1 --quiet --out "$f" || { status=1; continue; }
      # median ns/op per phase
      for phase in $(sed -n 's/^BenchmarkProve.*phase=\([a-z_0-9]*\).*/\1/p' "$f" | sort -u); do
        grep "phase=$phase " "$f" | awk '{print $3}' | sort -n |
          awk -v p="$phase" -v b="$backend" -v s="$size" '{x[NR] = $1} END {printf "%s %s %-10s %10.1f ms\n", b, s, p, x[int((NR+1)/2)] / 1e6}'
      done
    done
  done
fi
exit $status

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
# "2^20"), PROVE_COUNT proofs each (default 3) after PROVE_WARMUP unrecorded
# ones (default 1).
#
# (Compile-time variants side by side: bench/cuda-variants.sh.)
#   NTT_SETTINGS="2/pow 4/table 8/table"  also times the NTT under each
#       PERFBOT_NTT_RADIX/PERFBOT_NTT_TWIST setting (ntt-settings.txt)
#   NCU=1   profiles the MSM accumulation and an NTT pass with Nsight
#       Compute when ncu is installed (ncu.txt); NCU_WHAT="ntt:24" picks
#       what (default "msm:22 ntt:24")
set -uo pipefail
out=${1:-build/cuda-bench}
maxlog=${2:-24}
mkdir -p "$out"
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
t0=$(date +%s)
flags="-O3 -std=c++17 -arch=${CUDA_ARCH:-sm_90} -lineinfo"
if ! make -j4 cuda NVFLAGS="$flags -Xptxas -v" > "$out/build.log" 2>&1; then
  tail -40 "$out/build.log"; echo "cuda.sh: build failed (log: $out/build.log)"; exit 1
fi
echo "build: $(( $(date +%s) - t0 )) s"
cuobjdump -sass build/libperfbot_cuda.so 2>/dev/null | awk '/Function :/ {f = $3} /LDG|LDS|STS|STG/ {
    for (i = 1; i <= NF; i++) if ($i ~ /^(LDG|LDS|STS|STG)/) { split($i, a, "."); w = ($i ~ /\.128/) ? "128" : ($i ~ /\.64/) ? "64" : "32"; n[f " " a[1] "." w]++ } }
  END { for (k in n) print k, n[k] }' | sort | grep -E "msm_runs|ntt_dif" > "$out/memops.txt"
grep -E "Compiling entry|registers|spill" "$out/build.log" | grep -B1 -E "spill stores [1-9]|registers" | sed -n '1,60p' > "$out/resources.txt"
grep -A2 -E "Compiling entry function '_ZN2pb(14msm_accumulate|14ntt_dif_rounds|19msm_reduce_segments)" "$out/build.log" | head -20
status=0
if [ -z "${SKIP_CHECK:-}" ]; then
  build/perfbot_cuda_selftest check > "$out/check.log" 2>&1; status=$?
  grep -c '^ok' "$out/check.log" | sed 's/^/checks passed: /'
  grep -E '^FAIL|failures' "$out/check.log"
fi
[ -z "${SKIP_BENCH:-}" ] && build/perfbot_cuda_selftest bench "$maxlog" 2>&1 | tee "$out/bench.txt" | tail -40
for setting in ${NTT_SETTINGS:-}; do
  echo "ntt setting radix ${setting%/*}, twist ${setting#*/}:" | tee -a "$out/ntt-settings.txt"
  PERFBOT_NTT_RADIX=${setting%/*} PERFBOT_NTT_TWIST=${setting#*/} build/perfbot_cuda_selftest bench 24 ntt 2>&1 |
    grep -E "^(ntt|quotient)" | tee -a "$out/ntt-settings.txt"
done
if [ -n "${NCU:-}" ]; then
  ncu=$(command -v ncu || ls /usr/local/cuda/bin/ncu 2>/dev/null || true)
  if [ -z "$ncu" ]; then
    echo "ncu: not installed" | tee "$out/ncu.txt"
  else
    : > "$out/ncu.txt"
    for what in ${NCU_WHAT:-msm:22 ntt:24}; do
      timeout 200 "$ncu" --kernel-name regex:'msm_runs|ntt_dif_rounds|msm_reduce' --launch-count 4 \
        --section SpeedOfLight --section Occupancy --section WarpStateStats --section ComputeWorkloadAnalysis \
        --section MemoryWorkloadAnalysis --section LaunchStats --section SourceCounters \
        --metrics "sm__pipe_fmaheavy_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_alu_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,regex:smsp__average_warps_issue_stalled_(wait|math_pipe_throttle|dispatch_stall|not_selected|long_scoreboard|barrier|short_scoreboard)_per_issue_active\.ratio" \
        build/perfbot_cuda_selftest once ${what/:/ } >> "$out/ncu.txt" 2>&1 || echo "ncu $what failed: $(tail -3 "$out/ncu.txt")"
    done
    grep -E "msm_runs|ntt_dif|Duration|Throughput|Achieved Occupancy|Registers|Issue Slots|Stall|ERR|Warning|fmaheavy_cycles|alu_cycles|issue_stalled|inst_executed.sum" "$out/ncu.txt" | head -80
  fi
fi
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
        --count "${PROVE_COUNT:-3}" --warmup "${PROVE_WARMUP:-1}" --quiet --out "$f" || { status=1; continue; }
      bench/phase-medians.sh "$f" ns/op "$backend $size"
    done
  done
fi
exit $status

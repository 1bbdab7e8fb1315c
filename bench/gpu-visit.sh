#!/usr/bin/env bash
# bench/gpu-visit.sh OUT — one short visit to the GPU host, in the order of
# what matters if the time runs out: build the CUDA library (a test build,
# -DPERFBOT_TEST_HOOKS, which honours PERFBOT_TEST_SPIN_MSM), run the GPU
# tests that need the device (critical-path attribution with a planted
# slowdown on and off the path; NVML fingerprint and telemetry with
# CUDA_VISIBLE_DEVICES), record `perfbot system`, check the device-side
# plant, then measure the proofs-per-process lever (bench/gpu-levers.sh)
# until BUDGET seconds are spent. Everything lands in OUT/visit.tgz (the
# device hands back few files).
#
# No Go on the GPU host: build the Go side first and carry build/go,
#   go build -ldflags=-s -o build/go/perfbot ./cmd/perfbot
#   go test -c -ldflags=-s -o build/go/prover.test ./prover
#   go test -c -ldflags=-s -o build/go/execute.test ./runner/execute
#
#   BUDGET   seconds for the whole visit (default 230)
#   PLANT_POINTS  the H query's points at 2^16 constraints (default 131071)
#   ARMS     the levers' arms (default "c1 c5"; see bench/gpu-levers.sh)
#
# This is the entry point for a GPU visit. The other GPU scripts, each run on
# the device the same way (its header says what to build and carry):
#   bench/cuda.sh OUT MAXLOG         build the CUDA library, self-test, time
#                                    the G1 MSM and NTT kernels (and whole
#                                    proofs with PROVE_SIZES)
#   bench/cuda-variants.sh OUT N=F…  the library once per compile-time variant,
#                                    timed interleaved
#   bench/cuda-build-time.sh OUT     the library's clean build, one and four units
#   bench/gpu-verdict-time.sh OUT    a pull request's verdict time, builds included
#   bench/gpu-bot-flow.sh pack|run   the bot's whole flow (serve, worker,
#                                    PostgreSQL) on the GPU host, timed
#   bench/gpu-levers.sh OUT          the levers against a GPU proof's noise (this
#                                    script runs it in its time left)
#   bench/gpu-overhead.sh OUT        where one prover process's time goes
#   bench/gpu-compare.sh OUT         planted comparisons with perfbot compare
#                                    (RESIDENT=1: resident processes)
#   bench/gpu-set.sh KIND N RESULTS  a resumable set of comparisons of one kind
#   bench/gpu-proof-2e24.sh          the whole proof at 2^24: latency, pipeline,
#                                    peak RSS; leaves the library in OUT/lib.tgz
#   bench/gpu-g2-msm.sh check|time   the G2 MSM: checks and timings to 2^24
#   bench/sppark.sh run OUT          our G1 MSM and NTT beside sppark's
#   bench/sppark-prebuilt-lib.sh     the same on gpu-proof-2e24.sh's library
#   bench/keep-points.sh OUT         kept G1 points on and off (bench/prove-ab.sh)
#   bench/synth-noise.sh OUT         synthesis's own noise on the host (no CUDA)
#   bench/plant-msm.sh PROG ARGS…    PROG with a device-side plant (test build)
set -uo pipefail
out=${1:?usage: bench/gpu-visit.sh OUT}
work=$out/visit
mkdir -p "$work"
cd "$(dirname "$0")/.."
t0=$(date +%s)
budget=${BUDGET:-230}
pack() { tar -C "$out" -czf "$out/visit.tgz.new" visit && mv -f "$out/visit.tgz.new" "$out/visit.tgz"; }
log() { echo "[$(( $(date +%s) - t0 )) s] $*" | tee -a "$work/visit.log"; pack; }
trap pack EXIT

nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,temperature.gpu,persistence_mode,compute_mode \
  --format=csv > "$work/nvidia-smi.txt" 2>&1
nvidia-smi -q -d CLOCK,PERFORMANCE >> "$work/nvidia-smi.txt" 2>&1
log "host: $(nproc) CPUs, $(uname -r)"

flags="-O3 -std=c++17 -arch=${CUDA_ARCH:-sm_90} -lineinfo"
hooks=1
if ! make build/libperfbot_cuda.so NVFLAGS="$flags -DPERFBOT_TEST_HOOKS" > "$work/make.log" 2>&1; then
  log "the test build failed; building without the hooks"
  tail -20 "$work/make.log"
  hooks=0
  make build/libperfbot_cuda.so NVFLAGS="$flags" >> "$work/make.log" 2>&1 || { log "the build failed"; tail -20 "$work/make.log"; exit 1; }
fi
lib=$PWD/build/libperfbot_cuda.so
log "built (hooks $hooks)"

PERFBOT_CUDA_LIB=$lib build/go/prover.test -test.run 'CriticalPathGPU' -test.v > "$work/critical-gpu.txt" 2>&1
log "critical-path GPU test: rc $?"; grep -E "^(---|ok|FAIL)|critical_test" "$work/critical-gpu.txt" | head -20
CUDA_VISIBLE_DEVICES=0 CUDA_DEVICE_ORDER=PCI_BUS_ID build/go/execute.test -test.run 'WorksHere' -test.v > "$work/execute-gpu.txt" 2>&1
log "execute NVML tests with CUDA_VISIBLE_DEVICES=0: rc $?"; grep -E "^(---|ok|FAIL)" "$work/execute-gpu.txt"
build/go/perfbot system > "$work/system.txt" 2>&1
log "perfbot system: rc $?"

if [ "$hooks" = 1 ]; then
  for spin in 0 2000000 0 2000000; do
    PERFBOT_TEST_SPIN_MSM=${PLANT_POINTS:-131071}:$spin build/go/perfbot prove --backend gpu --cuda-lib "$lib" --constraints 2^16 \
      --srs random --count 3 --warmup 1 --quiet >> "$work/plant-$spin.txt" 2>> "$work/plant.err"
  done
  log "plant check done"
  for spin in 0 2000000; do
    for ph in msm_a msm_h; do
      grep "phase=$ph " "$work/plant-$spin.txt" | grep -o '[0-9.e+-]* accumulate-sec/op' | sort -g | awk -v s="$spin" -v p="$ph" \
        '{v[NR] = $1} END {printf "spin %s ns: %s accumulate median %.3f ms (n=%d)\n", s, p, v[int((NR+1)/2)] * 1e3, NR}'
    done
  done | tee -a "$work/visit.log"
fi

left=$(( budget - ($(date +%s) - t0) - 15 ))
log "levers: $left s left"
if [ "$left" -gt 30 ]; then
  PERFBOT=build/go/perfbot LIB=$lib ARMS="${ARMS:-c1 c5}" ROUNDS=40 STOP_AFTER=$(( left - 20 )) bench/gpu-levers.sh "$work/levers" > /dev/null 2>> "$work/levers.err"
  log "levers: $(ls "$work/levers" | grep -c -- '-r[0-9]*\.txt$') processes"
fi
log done

#!/usr/bin/env bash
# bench/gpu-compare.sh OUT — planted comparisons on the GPU host with
# perfbot compare itself: the shipped GPU config (deploy/perfbot-gpu.example.yml:
# 2^20 constraints, 5 proofs a process, α 0.01) on a test build of the CUDA
# library (-DPERFBOT_TEST_HOOKS), head the same build with the device plant
# as a variant (bench/plant-msm.sh: SPIN ns more in msm_h's bucket
# accumulation). One build serves both sides and every comparison. Writes
# OUT/gpu-planted-SPIN.json (each report), OUT/gpu-compare.log and
# OUT/perfbot.db.gz (the runs, for testdata).
#
# No Go on the GPU host: build perfbot here first and carry build/go,
#   go build -ldflags=-s -o build/go/perfbot ./cmd/perfbot
#
#   SPINS      ns added to msm_h's accumulation, one comparison each
#              (default 1250000: about 5% of msm_h's 25 ms at 2^20 on an
#              H200, off the critical path; 100000000 puts msm_h's branch
#              on it)
#   DEADLINE   seconds from the start after which no comparison runs on
#              (default 540): each gets what is left
#   POINTS     msm_h's points (default 2097151: 2^21 − 1 at 2^20 constraints)
#   MAX_COUNT  the comparison's cap on runs a side (default 30, so that it
#              ends inside one 10-minute call)
#   RESIDENT   1: the benchmark is resident (docs/resident.md): one
#              prover process a side serves every run
#   CUDA_ARCH  default sm_90
set -uo pipefail
out=${1:?usage: bench/gpu-compare.sh OUT}
mkdir -p "$out"
top=$(cd "$(dirname "$0")/.." && pwd)
perfbot=$top/build/go/perfbot
[ -x "$perfbot" ] || { echo "gpu-compare: no $perfbot: build it first (see the header)" >&2; exit 2; }
work=$(mktemp -d)
repo=$work/repo
mkdir -p "$repo/bench"
cp -r "$top/Makefile" "$top/cuda" "$repo/"
cp "$top/bench/plant-msm.sh" "$repo/bench/"
cp "$perfbot" "$repo/bench-perfbot"
arch=${CUDA_ARCH:-sm_90}
# The shipped GPU config, but for its build step: the prebuilt perfbot
# (no Go here) and the test build of the library; and the command starts
# with plant-msm.sh.
cat > "$repo/.perfbot.yml" <<YML
build:
  - [cp, bench-perfbot, "\${PERFBOT_OUT}/perfbot"]
  - [make, cuda, "BUILD=\${PERFBOT_OUT}", "NVFLAGS=-O3 -std=c++17 -arch=$arch -lineinfo -DPERFBOT_TEST_HOOKS"]
benchmarks:
  - name: prove-gpu
    command: [sh, bench/plant-msm.sh, "\${PERFBOT_OUT}/perfbot", prove]
    args: [--backend, gpu, --cuda-lib, "\${PERFBOT_OUT}/libperfbot_cuda.so",
           --constraints, "2^20", --srs, random, --count, "5", --warmup, "1", --quiet]
    cpus: auto
    cpuprofile: --cpuprofile
$( [ "${RESIDENT:-0}" = 1 ] && echo "    resident: true" )
count: 10
warmup: 1
max_count: 60
order: random
thresholds:
  alpha: 0.01
  min_change_pct: 1.0
YML
git -C "$repo" init -q
git -C "$repo" add -A
git -C "$repo" -c user.name=perfbot -c user.email=perfbot@localhost commit -qm "GPU config with the device plant as a variant"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv > "$out/gpu-compare.log" 2>&1
t0=$(date +%s)
rc=0
for spin in ${SPINS:-1250000}; do
  left=$(( ${DEADLINE:-540} - ($(date +%s) - t0) - 15 ))
  if [ "$left" -lt 60 ]; then
    echo "spin $spin: skipped, $left s left" >> "$out/gpu-compare.log"
    continue
  fi
  echo "spin $spin ns on ${POINTS:-2097151} points, cap ${MAX_COUNT:-30}: started $(date -u +%FT%TZ), $left s left" >> "$out/gpu-compare.log"
  timeout "$left" "$perfbot" compare --repo "$repo" --base HEAD --head-args "--plant-msm ${POINTS:-2097151}:$spin" \
    --max-count "${MAX_COUNT:-30}" --data-dir "$work/data" --db "$work/perfbot.db" --format json > "$out/gpu-planted-$spin.json" 2>> "$out/gpu-compare.log"
  r=$?
  echo "spin $spin: ended $(date -u +%FT%TZ), rc $r" >> "$out/gpu-compare.log"
  [ "$r" -eq 0 ] || rc=$r
done
gzip -c "$work/perfbot.db" > "$out/perfbot.db.gz" 2>> "$out/gpu-compare.log"
exit $rc

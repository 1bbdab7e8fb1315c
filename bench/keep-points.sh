#!/usr/bin/env bash
# bench/keep-points.sh OUT: what keeping the proving key's G1 points on the
# GPU saves in a whole proof. Runs perfbot prove --backend gpu with
# PERFBOT_GPU_KEEP_POINTS=on and =off, interleaved (the arm that goes first
# alternates by round), each process one warm-up proof and COUNT measured
# ones, and prints each phase's median over all the measured proofs of an
# arm, with its upload_points step.
#
#   SIZES="2^20 2^24" ROUNDS=2 COUNT=5 bench/keep-points.sh /tmp/keep
#
# Needs build/go/perfbot and build/libperfbot_cuda.so (make cuda), on the
# GPU machine.
set -euo pipefail
out=${1:?usage: bench/keep-points.sh OUT}
lib=${PERFBOT_CUDA_LIB:-$PWD/build/libperfbot_cuda.so}
mkdir -p "$out"

# median FILE PATTERN: the median of the values of unit-column PATTERN
# ("ns/op" or "upload_points-sec/op") per phase, in ms.
median() {
  local f=$1 unit=$2
  for phase in $(sed -n 's/^BenchmarkProve.*phase=\([a-z_0-9]*\) .*/\1/p' "$f" | sort -u); do
    grep "phase=$phase " "$f" | awk -v u="$unit" '{for (i = 3; i < NF; i++) if ($(i+1) == u) print $i}' | sort -g |
      awk -v p="$phase" -v u="$unit" 'NR > 0 {x[NR] = $1} END {if (NR) printf "%-10s %-22s %10.2f ms (n=%d)\n", p, u, (u == "ns/op" ? x[int((NR+1)/2)] / 1e6 : x[int((NR+1)/2)] * 1e3), NR}'
  done
}

for size in ${SIZES:-2^20}; do
  tag=${size/^/_}
  for round in $(seq "${ROUNDS:-2}"); do
    arms="on off"
    [ $((round % 2)) -eq 0 ] && arms="off on"
    for arm in $arms; do
      PERFBOT_GPU_KEEP_POINTS=$arm build/go/perfbot prove --backend gpu --cuda-lib "$lib" --constraints "$size" \
        --srs random --count "${COUNT:-5}" --warmup 1 --quiet --out "$out/prove-$tag-keep_$arm-r$round.txt"
    done
  done
  for arm in on off; do
    cat "$out"/prove-"$tag"-keep_"$arm"-r*.txt > "$out/all-$tag-keep_$arm.txt"
    echo "== $size, PERFBOT_GPU_KEEP_POINTS=$arm"
    median "$out/all-$tag-keep_$arm.txt" ns/op
    median "$out/all-$tag-keep_$arm.txt" upload_points-sec/op
  done
done

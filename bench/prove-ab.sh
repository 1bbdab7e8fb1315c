#!/usr/bin/env bash
# bench/prove-ab.sh OUT: two arms of whole proofs, interleaved, for an A/B
# measurement (on the GPU machine unless BACKEND=cpu). An arm is a perfbot binary and the
# environment it runs with:
#
#   A_BIN, B_BIN   perfbot binaries (default build/go/perfbot for both)
#   A_ENV, B_ENV   "NAME=value ..." set for that arm only (default none)
#   SIZES          constraint counts, e.g. "2^20 2^24" (default 2^20)
#   ROUNDS         rounds; the arm that goes first alternates (default 2)
#   COUNT          measured proofs a process, after one warm-up (default 5)
#   BACKEND        perfbot prove's --backend (default gpu)
#
# Each process writes OUT/prove-SIZE-ARM-rROUND.txt; the script prints each
# phase's median over an arm's measured proofs (bench/phase-medians.sh:
# ns/op, and the upload_points step where there is one). benchstat on the all-*.txt files
# gives the test (no Go on the GPU machine: run it where you read them):
#
#   benchstat -filter .unit:ns/op -row /phase OUT/all-2_20-A.txt OUT/all-2_20-B.txt
#
# Two builds of different revisions, for instance:
#
#   A_BIN=build/ab/perfbot-old B_BIN=build/ab/perfbot-new bench/prove-ab.sh /tmp/ab
#
# The GPU backend needs build/libperfbot_cuda.so (make cuda) or
# PERFBOT_CUDA_LIB.
set -euo pipefail
out=${1:?usage: bench/prove-ab.sh OUT (settings in the environment: see the script)}
lib=${PERFBOT_CUDA_LIB:-$PWD/build/libperfbot_cuda.so}
mkdir -p "$out"

# bin ARM and envs ARM: arm A's or B's binary and environment.
bin() { local v=$1_BIN; echo "${!v:-build/go/perfbot}"; }
envs() { local v=$1_ENV; echo "${!v:-}"; }

# run ARM SIZE FILE: one process of arm A or B.
run() {
  # shellcheck disable=SC2046 # the environment is a list of NAME=value words
  env $(envs "$1") "$(bin "$1")" prove --backend "${BACKEND:-gpu}" --cuda-lib "$lib" --constraints "$2" \
    --srs random --count "${COUNT:-5}" --warmup 1 --quiet --out "$3"
}

for size in ${SIZES:-2^20}; do
  tag=${size/^/_}
  for round in $(seq "${ROUNDS:-2}"); do
    arms="A B"
    [ $((round % 2)) -eq 0 ] && arms="B A"
    for arm in $arms; do
      run "$arm" "$size" "$out/prove-$tag-$arm-r$round.txt"
    done
  done
  for arm in A B; do
    cat "$out"/prove-"$tag"-"$arm"-r*.txt > "$out/all-$tag-$arm.txt"
    echo "== $size, $arm: $(bin "$arm") $(envs "$arm")"
    "$(dirname "$0")"/phase-medians.sh "$out/all-$tag-$arm.txt" ns/op
    "$(dirname "$0")"/phase-medians.sh "$out/all-$tag-$arm.txt" upload_points-sec/op
  done
done

#!/usr/bin/env bash
# bench/keep-points.sh OUT: what keeping the proving key's G1 points on the
# GPU saves in a whole proof: bench/prove-ab.sh with arm A
# PERFBOT_GPU_KEEP_POINTS=on and arm B =off (SIZES, ROUNDS and COUNT as
# there). The measurement in BENCHMARKS.md ("Keeping the proving key's G1
# points on the device") ran the same arms.
#
#   SIZES="2^20 2^24" ROUNDS=2 COUNT=5 bench/keep-points.sh /tmp/keep
set -euo pipefail
A_ENV=PERFBOT_GPU_KEEP_POINTS=on B_ENV=PERFBOT_GPU_KEEP_POINTS=off exec "$(dirname "$0")/prove-ab.sh" "$@"

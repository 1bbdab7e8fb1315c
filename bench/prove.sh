#!/usr/bin/env bash
# prove.sh PERFBOT OUTDIR — whole-proof benchmark on this host.
#
# Runs `perfbot prove` with verification at 2^12..2^16 constraints (set
# SIZES to change that) with COUNT (default 10; a 95% interval needs at least 6) measured proofs each, keeps the benchmark
# lines and logs under OUTDIR, and prints a per-phase benchstat table per
# size plus the peak RSS perfbot reports. Record the numbers, with the
# machine, in BENCHMARKS.md.
set -euo pipefail
bin=${1:?usage: prove.sh PERFBOT OUTDIR}
out=${2:?usage: prove.sh PERFBOT OUTDIR}
sizes=${SIZES:-"2^12 2^14 2^16"}
count=${COUNT:-10}
mkdir -p "$out"
for size in $sizes; do
  name=prove-${size/^/_}
  "$bin" prove --constraints "$size" --count "$count" --verify \
    --out "$out/$name.txt" 2> "$out/$name.log"
  echo "== $size: $(grep -o 'peak_rss_mib=[^ ]*\|rss_bytes_per_constraint=[^ ]*' "$out/$name.log" | tr '\n' ' ')"
  go tool benchstat -row /phase "$out/$name.txt"
done

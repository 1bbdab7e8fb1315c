#!/usr/bin/env bash
# bench/phase-medians.sh FILE [UNIT] [LABEL]: the median of each phase's
# UNIT values (default ns/op) in FILE, perfbot prove's output, in ms: one
# line a phase, "LABEL phase unit median ms (n=values)". A unit in seconds
# (a device step such as upload_points-sec/op) is converted too; phases
# without the unit print nothing.
set -euo pipefail
f=${1:?usage: bench/phase-medians.sh FILE [UNIT] [LABEL]}
unit=${2:-ns/op}
label=${3:-}
for phase in $(sed -n 's/^BenchmarkProve.*phase=\([a-z_0-9]*\) .*/\1/p' "$f" | sort -u); do
  grep "phase=$phase " "$f" | awk -v u="$unit" '{for (i = 3; i < NF; i++) if ($(i+1) == u) print $i}' | sort -g |
    awk -v l="$label" -v p="$phase" -v u="$unit" '{x[NR] = $1}
      END {if (NR) printf "%s%-10s %-22s %10.2f ms (n=%d)\n", (l == "" ? "" : l " "), p, u,
        (u == "ns/op" ? x[int((NR+1)/2)] / 1e6 : x[int((NR+1)/2)] * 1e3), NR}'
done

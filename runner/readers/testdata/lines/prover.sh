#!/usr/bin/env bash
# prover.sh stands in for a prover that prints its own timing lines, for
# the lines reader's tests: PROOFS proofs (default 3) of two phases that
# sleep, each timed and printed as "CUZK_TIMING PHASE_ms=MS".
# PERFBOT_SLOW=PHASE doubles that phase's sleep, to plant a slowdown.
set -euo pipefail
declare -A sleep_s=([synthesis]=0.2 [msm]=0.1)
echo "prover: starting ${PROOFS:-3} proofs" >&2
for ((p = 0; p < ${PROOFS:-3}; p++)); do
  for phase in synthesis msm; do
    s=${sleep_s[$phase]}
    if [[ ${PERFBOT_SLOW:-} == "$phase" ]]; then
      s=$(awk -v s="$s" 'BEGIN { print 2 * s }')
    fi
    t0=$EPOCHREALTIME
    sleep "$s"
    t1=$EPOCHREALTIME
    awk -v a="$t0" -v b="$t1" -v ph="$phase" 'BEGIN { printf "CUZK_TIMING %s_ms=%.3f\n", ph, (b - a) * 1000 }'
  done
  echo "proof $p verified"
done

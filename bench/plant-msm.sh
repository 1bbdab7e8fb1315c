#!/bin/sh
# bench/plant-msm.sh PROGRAM [ARGS...] — runs PROGRAM with ARGS, except
# that a "--plant-msm POINTS:NS" among them is taken out and exported as
# PERFBOT_TEST_SPIN_MSM=POINTS:NS, which a CUDA library built with
# -DPERFBOT_TEST_HOOKS honours: NS nanoseconds more device time in the
# bucket accumulation of every MSM of POINTS points. A .perfbot.yml whose
# benchmark command starts with this script turns the device plant into a
# variant, so one build serves both sides of a comparison:
#
#   perfbot compare --base HEAD --head-args "--plant-msm 2097151:1250000"
#
# (2^20 constraints: msm_h has 2^21 − 1 points; 1.25 ms is about 5% of its
# 25 ms on an H200.) Without the flag PROGRAM runs as given.
set -eu
[ $# -ge 1 ] || { echo "usage: plant-msm.sh PROGRAM [ARGS...] [--plant-msm POINTS:NS]" >&2; exit 2; }
prog=$1
shift
spin=
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  n=$((n - 1))
  if [ "$a" = --plant-msm ]; then
    [ "$n" -gt 0 ] || { echo "plant-msm.sh: --plant-msm needs POINTS:NS, e.g. 2097151:1250000" >&2; exit 2; }
    spin=$1
    shift
    n=$((n - 1))
    case $spin in
      *[!0-9:]* | :* | *: | *:*:*) bad=1 ;;
      *:*) bad= ;;
      *) bad=1 ;;
    esac
    [ -z "$bad" ] || { echo "plant-msm.sh: --plant-msm $spin: want POINTS:NS, e.g. 2097151:1250000" >&2; exit 2; }
    continue
  fi
  set -- "$@" "$a"
done
if [ -n "$spin" ]; then
  PERFBOT_TEST_SPIN_MSM=$spin
  export PERFBOT_TEST_SPIN_MSM
fi
exec "$prog" "$@"

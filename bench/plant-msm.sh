#!/bin/sh
# bench/plant-msm.sh PROGRAM [ARGS...] — runs PROGRAM with ARGS, except
# that these plant flags among them are taken out and exported for a test
# build to honour:
#
#   --plant-msm POINTS:NS   PERFBOT_TEST_SPIN_MSM=POINTS:NS: a CUDA library
#                           built with -DPERFBOT_TEST_HOOKS spends NS
#                           nanoseconds more device time in the bucket
#                           accumulation of every MSM of POINTS points
#   --plant-synthesis NS    PERFBOT_TEST_SPIN_SYNTHESIS=NS: a perfbot built
#                           with -tags perfbot_test_hooks spins NS more in
#                           synthesis
#   --plant-g2 NS           PERFBOT_TEST_SPIN_G2=NS: the same build spins NS
#                           more in the host's G2 MSM (msm_b2), on the
#                           critical path where it is the longer branch
#
# A .perfbot.yml whose benchmark command starts with this script turns a
# plant into a variant, so one build serves both sides of a comparison:
#
#   perfbot compare --base HEAD --head-args "--plant-msm 2097151:1250000"
#
# (2^20 constraints: msm_h has 2^21 − 1 points; 1.25 ms is about 5% of its
# 25 ms.) Without a plant flag PROGRAM runs as given; it is exec'd, so its
# stdin and stdout are the script's (a resident benchmark works through it).
set -eu
[ $# -ge 1 ] || { echo "usage: plant-msm.sh PROGRAM [ARGS...] [--plant-msm POINTS:NS] [--plant-synthesis NS] [--plant-g2 NS]" >&2; exit 2; }
prog=$1
shift
n=$#
while [ "$n" -gt 0 ]; do
  a=$1
  shift
  n=$((n - 1))
  case $a in
  --plant-msm | --plant-synthesis | --plant-g2) ;;
  *)
    set -- "$@" "$a"
    continue
    ;;
  esac
  [ "$n" -gt 0 ] || { echo "plant-msm.sh: $a needs a value" >&2; exit 2; }
  v=$1
  shift
  n=$((n - 1))
  case $a in
  --plant-msm)
    case $v in
      *[!0-9:]* | :* | *: | *:*:*) bad=1 ;;
      *:*) bad= ;;
      *) bad=1 ;;
    esac
    [ -z "$bad" ] || { echo "plant-msm.sh: --plant-msm $v: want POINTS:NS, e.g. 2097151:1250000" >&2; exit 2; }
    PERFBOT_TEST_SPIN_MSM=$v
    export PERFBOT_TEST_SPIN_MSM
    ;;
  *)
    case $v in
      '' | *[!0-9]*) echo "plant-msm.sh: $a $v: want nanoseconds, e.g. 13000000" >&2; exit 2 ;;
    esac
    if [ "$a" = --plant-synthesis ]; then
      PERFBOT_TEST_SPIN_SYNTHESIS=$v
      export PERFBOT_TEST_SPIN_SYNTHESIS
    else
      PERFBOT_TEST_SPIN_G2=$v
      export PERFBOT_TEST_SPIN_G2
    fi
    ;;
  esac
done
exec "$prog" "$@"

#!/usr/bin/env bash
# bench/gpu-levers.sh OUT — on the GPU host: the levers against a GPU
# proof's run-to-run noise, measured interleaved. Each arm is one way of
# running `perfbot prove --backend gpu`; every round runs every arm once, as
# its own process, in a fresh random order, so drift and periodic
# interference fall on all arms alike. Each process writes
# OUT/ARM-rROUND.txt. Read the results where there is Go:
#
#   go run ./bench/levertable OUT      # per arm and phase: median and 95% interval of the median
#
# The interval is the one perfbot compare prints for a side (benchmath's
# AssumeNothing over one value per process: the median of its measured
# proofs), so an arm's ± at ROUNDS processes is what a comparison with that
# many runs a side would see.
#
#   PERFBOT   perfbot binary (default build/go/perfbot)
#   LIB       libperfbot_cuda.so (default build/libperfbot_cuda.so)
#   SIZE      constraints (default 2^20)
#   ROUNDS    rounds (default 6)
#   ARMS      the arms to run (default: all of them, below)
#   STOP_AFTER seconds: start no round after this many (default: none)
#
# The arms: NAME, then the environment, the CPU list (taskset; "-" for
# none) and prove's arguments after the common ones.
set -euo pipefail
out=${1:?usage: bench/gpu-levers.sh OUT (settings in the environment: see the script)}
perfbot=${PERFBOT:-build/go/perfbot}
lib=${LIB:-build/libperfbot_cuda.so}
size=${SIZE:-2^20}
rounds=${ROUNDS:-6}
ncpu=$(nproc)
all="1-$((ncpu - 1))"
half="$((ncpu / 2))-$((ncpu - 1))"
declare -A env cpus args
add() { env[$1]=$2; cpus[$1]=$3; args[$1]=$4; }
#   name          environment                       CPUs    arguments
add c1            ""                                "$all"  "--count 1 --warmup 1"
add c5            ""                                "$all"  "--count 5 --warmup 1"
add c5-w3         ""                                "$all"  "--count 5 --warmup 3"
add c5-gogc400    "GOGC=400"                        "$all"  "--count 5 --warmup 1"
add c5-nogc       "GOGC=off GOMEMLIMIT=48GiB"       "$all"  "--count 5 --warmup 1"
add c5-gogc50     "GOGC=50"                         "$all"  "--count 5 --warmup 1"
add c5-procs8     "GOMAXPROCS=8"                    "$all"  "--count 5 --warmup 1"
add c9            ""                                "$all"  "--count 9 --warmup 1"
add c5-unpinned   ""                                "-"     "--count 5 --warmup 1"
add c5-halfcpus   ""                                "$half" "--count 5 --warmup 1"
arms=${ARMS:-c1 c5 c5-w3 c5-gogc400 c5-nogc c5-unpinned c5-halfcpus}
for a in $arms; do
  [ -n "${args[$a]+x}" ] || { echo "gpu-levers.sh: no arm $a (arms: ${!args[*]})" >&2; exit 2; }
done
mkdir -p "$out"
start=$(date +%s)
for r in $(seq 1 "$rounds"); do
  if [ -n "${STOP_AFTER:-}" ] && [ $(( $(date +%s) - start )) -ge "$STOP_AFTER" ]; then
    echo "gpu-levers.sh: STOP_AFTER=$STOP_AFTER s reached before round $r"; break
  fi
  for a in $(printf '%s\n' $arms | shuf); do
    pin=()
    [ "${cpus[$a]}" != "-" ] && pin=(taskset -c "${cpus[$a]}")
    t0=$(date +%s.%N)
    # shellcheck disable=SC2086 # the environment and arguments are word lists
    env ${env[$a]} "${pin[@]}" "$perfbot" prove --backend gpu --cuda-lib "$lib" --constraints "$size" \
      --srs random --quiet ${args[$a]} --out "$out/$a-r$r.txt"
    awk -v a="$a" -v r="$r" -v t0="$t0" -v t1="$(date +%s.%N)" 'BEGIN {printf "%s r%d %.1f s\n", a, r, t1 - t0}'
  done
done | tee -a "$out/log.txt"

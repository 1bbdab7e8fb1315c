#!/usr/bin/env bash
# load.sh SECONDS [WORKERS] — imitate a shared runner: WORKERS (default 1)
# unpinned processes, each alternating busy and idle periods of random
# length, 0.5 to 5 s each (uniform, in steps of 0.1 s), for SECONDS in all.
# A busy period is a shell spinning on one CPU; nothing is pinned, so the
# scheduler puts it wherever it likes, beside or on the benchmark's CPU.
#
# It stops every worker when SECONDS have passed or when it is killed
# (TERM, INT, HUP, or its parent's EXIT trap), and prints one line a
# worker when it ends: busy seconds of wall time over the whole run, so
# that a measurement can say how loaded the machine was. RANDOM_SEED
# seeds the periods (default: the process id).
#
#   bench/load.sh 3600 2 &   # an hour of two intermittent CPU hogs
set -euo pipefail
total=${1:?usage: load.sh SECONDS [WORKERS]}
workers=${2:-1}
case $total$workers in *[!0-9]*) echo "load.sh: SECONDS and WORKERS are whole numbers" >&2; exit 2 ;; esac
[ "$workers" -ge 1 ] || { echo "load.sh: WORKERS is at least 1" >&2; exit 2; }
RANDOM=${RANDOM_SEED:-$$}
end=$(($(date +%s) + total))

worker() { # worker ID SEED: alternate busy and idle until the end time
  local id=$1 busy=0 t
  RANDOM=$2
  trap 'printf "load worker %d: busy about %d.%d s when stopped\n" "$id" $((busy / 10)) $((busy % 10)); exit 0' TERM
  while :; do
    now=$(date +%s)
    [ "$now" -lt "$end" ] || break
    t=$((5 + RANDOM % 46)) # tenths of a second: 0.5 … 5.0
    if [ $((now + (t + 9) / 10)) -gt "$end" ]; then t=$(((end - now) * 10)); fi
    timeout "$(printf '%d.%d' $((t / 10)) $((t % 10)))" sh -c 'while :; do :; done' 2>/dev/null || true
    busy=$((busy + t))
    now=$(date +%s)
    [ "$now" -lt "$end" ] || break
    t=$((5 + RANDOM % 46))
    sleep "$(printf '%d.%d' $((t / 10)) $((t % 10)))"
  done
  printf 'load worker %d: busy %d.%d s of %d s\n' "$id" $((busy / 10)) $((busy % 10)) "$total"
}

pids=()
stop() {
  trap - TERM INT HUP EXIT
  for p in "${pids[@]}"; do pkill -TERM -P "$p" 2>/dev/null || true; kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
}
trap 'stop; exit 0' TERM INT HUP
trap stop EXIT
for i in $(seq 1 "$workers"); do
  worker "$i" "$RANDOM" &
  pids+=($!)
done
wait "${pids[@]}" 2>/dev/null || true

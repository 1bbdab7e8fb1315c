#!/usr/bin/env bash
# compare-fpr-parallel.sh OUTDIR P CPUS_EACH [N] — bench/compare-fpr.sh on a
# host with many cores: P instances at once, instance k pinned (taskset) to
# its own CPUS_EACH CPUs (k*CPUS_EACH …), each running up to N A/A and N
# planted comparisons into OUTDIR/k, then one summary over all of them in
# OUTDIR/all/summary.txt.
#
# The instances share the host's memory bandwidth, caches and page cache,
# and each one's load meter sees the others as other processes: this is a
# busy shared runner, not an idle one, and BENCHMARKS.md labels it so.
# Every variable compare-fpr.sh reads (REPO, PERFBOT, ALPHA, MAX_COUNT,
# PLANT_PCT, UNTIL, KINDS, …) passes through; the instance's own CPUs come
# from taskset, so leave CPUS unset (cpus: auto pins to what taskset gave).
#
#   REPO=/tmp/fpr PERFBOT=/tmp/perfbot ALPHA=0.01 MAX_COUNT=60 UNTIL=+4min \
#     bench/compare-fpr-parallel.sh "$OUT/par" 8 2 10
#
# STOP_AFTER=SECONDS stops every instance that is still running then (its
# whole process group: compare-fpr.sh, perfbot compare and the prover runs)
# and still writes the summary of the comparisons that finished; the ones
# cut off are not counted (their JSON was never written) and the summary
# says how many instances were stopped. Use it instead of `timeout`, which
# kills this script before its summary and leaves the instances running.
#
# On the GPU host a call runs at most 600 s and an A/A comparison at 60
# rounds with two CPUs a side takes 8-10 minutes there, so one call is one
# comparison per instance (UNTIL=+1min N=1, STOP_AFTER=560); bring back
# only the reports, not the databases (too large to return):
#   tar czf "$OUT/par.tgz" --exclude='bench.db*' -C /tmp par
set -euo pipefail
out=${1:?usage: compare-fpr-parallel.sh OUTDIR P CPUS_EACH [N]}
p=${2:?usage: compare-fpr-parallel.sh OUTDIR P CPUS_EACH [N]}
each=${3:?usage: compare-fpr-parallel.sh OUTDIR P CPUS_EACH [N]}
n=${4:-20}
for v in "$p" "$each" "$n"; do
  case $v in '' | *[!0-9]* | 0) echo "compare-fpr-parallel: P, CPUS_EACH and N are positive whole numbers, not '$v'" >&2; exit 2 ;; esac
done
case ${STOP_AFTER:-1} in *[!0-9]* | 0) echo "compare-fpr-parallel: STOP_AFTER is a positive whole number of seconds, not '$STOP_AFTER'" >&2; exit 2 ;; esac
for c in taskset setsid; do
  command -v "$c" > /dev/null || { echo "compare-fpr-parallel: needs $c (util-linux)" >&2; exit 2; }
done
[ -z "${CPUS:-}" ] || { echo "compare-fpr-parallel: each instance's CPUs come from taskset; unset CPUS" >&2; exit 2; }
if [ "$((p * each))" -gt "$(nproc)" ]; then
  echo "compare-fpr-parallel: $p instances of $each CPUs need $((p * each)) CPUs; this machine has $(nproc)" >&2
  exit 2
fi
top=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$out"
pids=()
for k in $(seq 0 $((p - 1))); do
  cpus=$((k * each))-$((k * each + each - 1))
  mkdir -p "$out/$k"
  # setsid: each instance leads its own process group (its pid is the
  # group's id), so STOP_AFTER can stop all of it at once.
  setsid taskset -c "$cpus" "$top/bench/compare-fpr.sh" "$out/$k" "$n" > "$out/$k/log.txt" 2>&1 &
  pids+=($!)
done
timer=
if [ -n "${STOP_AFTER:-}" ]; then
  (
    sleep "$STOP_AFTER"
    touch "$out/.stopped"
    for pid in "${pids[@]}"; do kill -TERM -- "-$pid" 2> /dev/null || true; done
  ) &
  timer=$!
fi
rc=0 stopped=0
for pid in "${pids[@]}"; do
  st=0; wait "$pid" || st=$?
  # 143: ended by the TERM that STOP_AFTER sent; any other failure is one.
  if [ "$st" -eq 143 ] && [ -e "$out/.stopped" ]; then stopped=$((stopped + 1)); elif [ "$st" -ne 0 ]; then rc=1; fi
done
if [ -n "$timer" ]; then
  pkill -P "$timer" sleep 2> /dev/null || true
  kill "$timer" 2> /dev/null || true
  wait "$timer" 2> /dev/null || true
fi
rm -f "$out/.stopped"
[ "$rc" -eq 0 ] || echo "compare-fpr-parallel: an instance failed; see $out/*/log.txt" >&2

# One summary: every instance's reports, renumbered into OUTDIR/all, read
# by compare-fpr.sh itself (SUMMARY_ONLY: it starts no comparison).
rm -rf "$out/all"
mkdir -p "$out/all"
a=0 q=0
for k in $(seq 0 $((p - 1))); do
  for f in "$out/$k"/aa-*.json; do [ -s "$f" ] && a=$((a + 1)) && cp "$f" "$out/all/aa-$a.json"; done
  for f in "$out/$k"/planted-*.json; do [ -s "$f" ] && q=$((q + 1)) && cp "$f" "$out/all/planted-$q.json"; done
done
m=$((a > q ? a : q))
[ "$m" -gt 0 ] || { echo "compare-fpr-parallel: no comparison finished" >&2; exit 1; }
env -u UNTIL SUMMARY_ONLY=1 "$top/bench/compare-fpr.sh" "$out/all" "$m" > "$out/all/log.txt" 2>&1 || rc=1
[ "$stopped" -eq 0 ] || echo "stopped after ${STOP_AFTER} s (STOP_AFTER): $stopped of $p instances were cut off; the comparisons they had in progress are not counted" >> "$out/all/summary.txt"
cat "$out/all/summary.txt"
# Each instance's meter, from its database (a stopped instance wrote no
# summary of its own).
for k in $(seq 0 $((p - 1))); do
  python3 "$top/bench/meter.py" "$out/$k/bench.db" "instance $k: "
done
exit "$rc"

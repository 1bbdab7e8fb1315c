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
# On the GPU host a call runs at most 600 s and an A/A comparison at 60
# rounds with two CPUs a side takes 8-10 minutes there, so one call is one
# comparison per instance (UNTIL=+1min N=1); bring back only the reports,
# not the databases (too large to return):
#   tar czf "$OUT/par.tgz" --exclude='bench.db*' -C /tmp par
set -euo pipefail
out=${1:?usage: compare-fpr-parallel.sh OUTDIR P CPUS_EACH [N]}
p=${2:?usage: compare-fpr-parallel.sh OUTDIR P CPUS_EACH [N]}
each=${3:?usage: compare-fpr-parallel.sh OUTDIR P CPUS_EACH [N]}
n=${4:-20}
for v in "$p" "$each" "$n"; do
  case $v in '' | *[!0-9]* | 0) echo "compare-fpr-parallel: P, CPUS_EACH and N are positive whole numbers, not '$v'" >&2; exit 2 ;; esac
done
command -v taskset > /dev/null || { echo "compare-fpr-parallel: needs taskset (util-linux)" >&2; exit 2; }
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
  taskset -c "$cpus" "$top/bench/compare-fpr.sh" "$out/$k" "$n" > "$out/$k/log.txt" 2>&1 &
  pids+=($!)
done
rc=0
for pid in "${pids[@]}"; do wait "$pid" || rc=1; done
[ "$rc" -eq 0 ] || echo "compare-fpr-parallel: an instance failed; see $out/*/log.txt" >&2

# One summary: every instance's reports, renumbered into OUTDIR/all, read
# by compare-fpr.sh itself (UNTIL in the past: it starts no comparison).
rm -rf "$out/all"
mkdir -p "$out/all"
a=0 q=0
for k in $(seq 0 $((p - 1))); do
  for f in "$out/$k"/aa-*.json; do [ -s "$f" ] && a=$((a + 1)) && cp "$f" "$out/all/aa-$a.json"; done
  for f in "$out/$k"/planted-*.json; do [ -s "$f" ] && q=$((q + 1)) && cp "$f" "$out/all/planted-$q.json"; done
done
m=$((a > q ? a : q))
[ "$m" -gt 0 ] || { echo "compare-fpr-parallel: no comparison finished" >&2; exit 1; }
UNTIL="-1 min" "$top/bench/compare-fpr.sh" "$out/all" "$m" > "$out/all/log.txt" 2>&1 || rc=1
cat "$out/all/summary.txt"
for k in $(seq 0 $((p - 1))); do grep -h "other processes" "$out/$k/summary.txt" 2>/dev/null | sed "s/^/instance $k: /" || true; done
exit "$rc"

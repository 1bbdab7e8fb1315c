#!/usr/bin/env bash
# make-test-under-load.sh [RUNS] [OUT] — run make test RUNS times (default
# 3) one after another, each beside a busy loop that keeps one CPU spinning
# for the whole run, in a fresh worktree of the committed HEAD (so edits in
# this checkout cannot reach it), and append one line per run to OUT
# (default bench/results/make-test-under-load.txt): date, commit, exit
# status, wall time, the machine's CPUs and load average, and the slowest
# packages. Each run's whole log is kept beside OUT as
# make-test-under-load-DATE-N.log while it fails, removed when it passes.
#
# It is how BENCHMARKS.md's make test figures are measured: on the 2-core
# development machine the busy loop takes half the machine, as another
# job on a shared runner would. A run is bounded by 30 minutes.
#
#   nohup bench/make-test-under-load.sh 3 &
set -euo pipefail
runs=${1:-3}
top=$(git rev-parse --show-toplevel)
out=${2:-$top/bench/results/make-test-under-load.txt}
case $runs in '' | *[!0-9]*) echo "make-test-under-load: RUNS is a whole number" >&2; exit 2 ;; esac
mkdir -p "$(dirname "$out")"
commit=$(git -C "$top" rev-parse --short HEAD)
wt=$(mktemp -d /tmp/perfbot-make-test.XXXXXX)
busy=""
cleanup() {
  [ -n "$busy" ] && kill "$busy" 2>/dev/null || true
  git -C "$top" worktree remove --force "$wt" 2>/dev/null || rm -rf "$wt"
}
trap cleanup EXIT
git -C "$top" worktree add -q --detach "$wt" "$commit"
for i in $(seq 1 "$runs"); do
  log=$(dirname "$out")/make-test-under-load-$(date -u +%Y%m%dT%H%M%S)-$i.log
  sh -c 'while :; do :; done' &
  busy=$!
  start=$(date +%s)
  rc=0
  (cd "$wt" && timeout 1800 make test) > "$log" 2>&1 || rc=$?
  wall=$(($(date +%s) - start))
  kill "$busy" 2>/dev/null || true
  wait "$busy" 2>/dev/null || true
  busy=""
  slowest=$(grep -E '^ok  	' "$log" | awk '{print $3, $2}' | sort -rn | head -4 | awk '{sub("github.com/perfbot/perfbot/", "", $2); printf "%s %s, ", $2, $1}' | sed 's/, $//')
  printf '%s commit %s run %d/%d: exit %d, %dm%02ds beside a busy loop (%d CPUs, load %s); slowest: %s\n' \
    "$(date -u +%Y-%m-%dT%H:%MZ)" "$commit" "$i" "$runs" "$rc" $((wall / 60)) $((wall % 60)) "$(nproc)" \
    "$(cut -d' ' -f1-3 /proc/loadavg)" "$slowest" >> "$out"
  if [ "$rc" -eq 0 ]; then rm -f "$log"; else grep -E -- '--- FAIL|^FAIL' "$log" | head -10 >> "$out"; fi
done

#!/usr/bin/env bash
# cpuprofile-overhead.sh [N] — what the default config's CPU profile costs
# a proof.
#
# Builds perfbot (or takes PERFBOT=PATH), then runs `perfbot prove` with the
# default .perfbot.yml's arguments (2^16 constraints, random keys, one
# warm-up and one measured proof per process) 2N times (N default 10),
# alternating without and with --cpuprofile FILE (off on off on …) so that
# drift of the machine hits both alike. From every process it takes the
# measured proof's phase=total time and the process's wall time (which
# includes writing the profile at exit), and prints for each the medians
# without and with the profile and their difference in percent. The target
# is ≤ 2% of a proof. It also prints the profiles' median size.
#
# COUNTERS=1 measures counting and profiling together, as the issue asks:
# "without" then also passes --counters off, "with" keeps the per-phase
# counters on (the default) and adds the profile.
#
# CPUS=LIST runs every process under taskset -c LIST (cpus: auto pins
# perfbot's runs to every CPU but the first); CONSTRAINTS=2^N changes the
# size. On a machine that is doing something else, the numbers say more
# about that than about profiling: run it on an idle one for figures to
# record.
set -euo pipefail
n=${1:-10}
constraints=${CONSTRAINTS:-2^16}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

bin=${PERFBOT:-}
if [ -z "$bin" ]; then
  top=$(git rev-parse --show-toplevel)
  (cd "$top" && go build -o "$work/perfbot" ./cmd/perfbot)
  bin=$work/perfbot
fi
pin=()
if [ -n "${CPUS:-}" ]; then pin=(taskset -c "$CPUS"); fi

# prove_once MODE: one process; appends "total_ns wall_ns [profile_bytes]"
# to $work/MODE.
prove_once() {
  local mode=$1 extra=() out start end total size=""
  if [ "$mode" = on ]; then extra=(--cpuprofile "$work/cpu.pprof"); fi
  if [ "$mode" = off ] && [ -n "${COUNTERS:-}" ]; then extra=(--counters off); fi
  start=$(date +%s%N)
  out=$("${pin[@]}" "$bin" prove --constraints "$constraints" --count 1 --warmup 1 \
    --srs random --key-dir "$work/keys" --quiet "${extra[@]}" 2>>"$work/stderr")
  end=$(date +%s%N)
  total=$(awk '/\/phase=total /{print $3}' <<<"$out")
  [ -n "$total" ] || { echo "no phase=total line from perfbot prove:" >&2; echo "$out" >&2; cat "$work/stderr" >&2; exit 1; }
  if [ "$mode" = on ]; then
    size=$(stat -c %s "$work/cpu.pprof")
    rm -f "$work/cpu.pprof"
  fi
  echo "$total $((end - start)) $size" >> "$work/$mode"
}

# median FILE COLUMN
median() {
  awk -v c="$2" '{print $c}' "$1" | sort -g |
    awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'
}

for i in $(seq 1 "$n"); do
  prove_once off
  prove_once on
  printf '\rround %d of %d' "$i" "$n" >&2
done
echo >&2

report() {
  local what=$1 col=$2 off on
  off=$(median "$work/off" "$col")
  on=$(median "$work/on" "$col")
  awk -v w="$what" -v a="$off" -v b="$on" \
    'BEGIN {printf "%-22s %10.2f ms %10.2f ms %+8.2f%%\n", w, a / 1e6, b / 1e6, (b - a) / a * 100}'
}
echo "perfbot prove --constraints $constraints, $n processes each, medians:"
with="--cpuprofile"; [ -n "${COUNTERS:-}" ] && with="counters+prof"
printf '%-22s %13s %13s %9s\n' "" "without" "$with" "change"
report "proof (phase=total)" 1
report "process wall" 2
echo "profile size: $(median "$work/on" 3) bytes"

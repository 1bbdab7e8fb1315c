#!/usr/bin/env bash
# compare-fpr.sh OUTDIR [N] — how often perfbot compare cries wolf, and how
# often it finds a real slowdown, on this machine with the default config
# (the prover at 2^16 constraints, 10 runs a side, up to 60, the sides of
# each round in a random order, looks that share α = 0.01).
#
# It clones this repository into a temporary directory, adds one commit that
# makes the msm_h phase of every proof PLANT_PCT percent slower (default 5:
# a spin of that share of the phase's own time, inside the phase's
# measurement), then runs N A/A comparisons (base against itself) and N
# planted comparisons (base against the slowed commit), alternating. It
# prints the false-alarm count (A/A comparisons with any regression or
# improvement) with its exact 95% Clopper–Pearson upper bound, the
# detection rate (planted comparisons whose msm_h row is a regression and
# explains total's change) and the median rounds a side used, lists every
# miss with its verdict and msm_h's minimum detectable change, and leaves
# every JSON report under OUTDIR (summary.txt holds the summary).
#
# LOAD=W runs bench/load.sh with W workers for as long as the measurement
# takes (a shared runner: W unpinned processes alternating busy and idle
# periods of 0.5-5 s). The load starts once the clone and the builds are
# done and stops when the last comparison ends.
#
# Levers against noise (default: unset, the default config): PROVE_COUNT=K
# makes K measured proofs per process (the run's value is their median);
# CPUS=LIST pins every run to those CPUs (`cpus:` in .perfbot.yml, e.g.
# CPUS=1 to leave CPU 0 to the system). PROFILE=on|off writes the default
# config itself with prove's CPU profile on or off (and `cpus: auto`, as the
# default has, unless CPUS says otherwise), so that two OUTDIRs run with
# PROFILE=on and PROFILE=off, alternately, measure what profiling costs
# detection. ORDER=random|abba|alternate writes the default config with that
# order: of the sides. Any of these commits a .perfbot.yml to the base
# revision. MAX_COUNT=M passes --max-count M (the cap on runs a side while a
# phase is inconclusive). ALPHA=A writes the default config with
# `thresholds: {alpha: A}` (the family-wise false-alarm level; with PREPARE
# it goes into the prepared config). KINDS="planted" (or "aa") runs only that kind; a
# measurement too long for one sitting can be split that way. An OUTDIR
# that already holds a kind-i.json skips that comparison, so an interrupted
# run resumes where it stopped. UNTIL=TIME (anything `date -d` reads, e.g.
# 09:50; a time already past is refused) starts no comparison after TIME;
# the summary counts the stored ones. SUMMARY_ONLY=1 starts none at all.
#
# On a machine without Go (the GPU host), REPO=DIR PERFBOT=BIN skip the
# clone, the planting and the builds: DIR is a prepared repository whose
# HEAD~1 is the base and HEAD the planted commit (its .perfbot.yml builds
# by copying a binary committed with it), BIN the perfbot that runs the
# comparisons, and PLANT_PCT says what HEAD planted, for the summary.
# PREPARE=DIR makes that repository here and stops: it clones and plants as
# usual, then writes DIR/repo, whose two commits (base, planted) each carry
# their own prebuilt perfbot (bench-perfbot) and a .perfbot.yml that is the
# default config except that its build step copies that binary, and
# DIR/fpr.bundle, the same repository as one file to carry to the GPU host
# (OUTDIR is not used, "-" will do). The base's binary runs the comparisons:
#
#   PREPARE=build/fpr PLANT_PCT=2 bench/compare-fpr.sh -
#   # on the GPU host:
#   git clone -q build/fpr/fpr.bundle /tmp/fpr && git -C /tmp/fpr show HEAD~1:bench-perfbot > /tmp/perfbot
#   chmod +x /tmp/perfbot && REPO=/tmp/fpr PERFBOT=/tmp/perfbot PLANT_PCT=2 bench/compare-fpr.sh OUT 16
set -euo pipefail
out=${1:?usage: compare-fpr.sh OUTDIR [N]}
n=${2:-20}
case ${PROFILE:-} in '' | on | off) ;; *) echo "compare-fpr: PROFILE is on or off, not '$PROFILE'" >&2; exit 2 ;; esac
case ${ORDER:-} in '' | random | abba | alternate) ;; *) echo "compare-fpr: ORDER is random, abba or alternate, not '$ORDER'" >&2; exit 2 ;; esac
plant=${PLANT_PCT:-5}
case $plant in '' | *[!0-9]*) echo "compare-fpr: PLANT_PCT is a whole percentage, not '$plant'" >&2; exit 2 ;; esac
case ${ALPHA:-} in '' | 0.[0-9]*) ;; *) echo "compare-fpr: ALPHA is a level such as 0.01, not '$ALPHA'" >&2; exit 2 ;; esac
case ${LOAD:-0} in *[!0-9]*) echo "compare-fpr: LOAD is a number of load workers, not '$LOAD'" >&2; exit 2 ;; esac
until=
if [ -n "${UNTIL:-}" ]; then
  until=$(date -d "$UNTIL" +%s) || { echo "compare-fpr: UNTIL is a time date -d reads, not '$UNTIL'" >&2; exit 2; }
  # A bare time is today's: after midnight's wrap it is already past and
  # would start nothing at all.
  if [ "$until" -le "$(date +%s)" ]; then
    echo "compare-fpr: UNTIL '$UNTIL' is $(date -d "@$until" '+%F %H:%M'), already past: no comparison would start (give a later time, e.g. 'tomorrow $UNTIL')" >&2
    exit 2
  fi
fi
# SUMMARY_ONLY=1 starts no comparison: it summarises the reports OUTDIR
# holds (compare-fpr-parallel.sh's merged summary).
if [ "${SUMMARY_ONLY:-}" = 1 ]; then until=0; fi
top=$(cd "$(dirname "$0")/.." && pwd)
if [ -z "${PREPARE:-}" ]; then
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
fi
work=$(mktemp -d)
loadpid=
trap '[ -n "$loadpid" ] && kill "$loadpid" 2>/dev/null; rm -rf "$work"' EXIT

if [ -n "${REPO:-}" ]; then
  [ -n "${PERFBOT:-}" ] || { echo "compare-fpr: REPO needs PERFBOT, the perfbot binary that runs the comparisons" >&2; exit 2; }
  [ -d "$REPO" ] || { echo "compare-fpr: REPO=$REPO is not a directory" >&2; exit 2; }
  repo=$(cd "$REPO" && pwd) bin=$(cd "$(dirname "$PERFBOT")" && pwd)/$(basename "$PERFBOT")
  [ -x "$bin" ] || { echo "compare-fpr: PERFBOT=$PERFBOT is not an executable file" >&2; exit 2; }
  git -C "$repo" rev-parse -q --verify HEAD~1 > /dev/null || { echo "compare-fpr: REPO=$REPO is not a git repository with a base (HEAD~1) and a planted HEAD" >&2; exit 2; }
  base=$(git -C "$repo" rev-parse HEAD~1) head=$(git -C "$repo" rev-parse HEAD)
else
  git clone -q "$top" "$work/repo"
  cd "$work/repo"
  if [ -n "${PROVE_COUNT:-}${CPUS:-}${PROFILE:-}${ORDER:-}" ] || { [ -n "${ALPHA:-}" ] && [ -z "${PREPARE:-}" ]; }; then
    cat > .perfbot.yml <<YML
build:
  - [go, build, -o, "\${PERFBOT_OUT}/perfbot", ./cmd/perfbot]
benchmarks:
  - name: prove
    command: ["\${PERFBOT_OUT}/perfbot", prove]
    args: [--constraints, "2^16", --count, "${PROVE_COUNT:-1}", --warmup, "1", --srs, random, --quiet]
YML
    if [ -n "${CPUS:-}" ]; then
      echo "    cpus: \"$CPUS\"" >> .perfbot.yml
    elif [ -n "${PROFILE:-}${ALPHA:-}" ]; then
      echo "    cpus: auto" >> .perfbot.yml
    fi
    # ALPHA alone keeps the rest of the default config, profile included.
    if [ "${PROFILE:-}" = on ] || { [ -z "${PROFILE:-}${PROVE_COUNT:-}${CPUS:-}" ] && [ -n "${ALPHA:-}" ]; }; then
      echo "    cpuprofile: --cpuprofile" >> .perfbot.yml
    fi
    [ -n "${ORDER:-}" ] && echo "order: $ORDER" >> .perfbot.yml
    [ -n "${ALPHA:-}" ] && printf 'thresholds:\n  alpha: %s\n' "$ALPHA" >> .perfbot.yml
    git add .perfbot.yml
    git -c user.name=bench -c user.email=bench@localhost commit -qm "bench: prove --count ${PROVE_COUNT:-1} cpus ${CPUS:-${PROFILE:+auto}} profile ${PROFILE:-off} alpha ${ALPHA:-default}"
  fi
  base=$(git rev-parse HEAD)
  # The spin goes right after the phase's labelled span (pprof.Do, whose
  # callback ends with m.markEnd()), inside its measurement (before … after).
  # It lasts PLANT_PCT% of the phase's time so far, fixed before it starts;
  # until 2026-12-02 the loop re-read the growing elapsed time, which planted
  # P/(100-P): +5.26% for 5, +25% for 20 (BENCHMARKS.md says which sets).
  PLANT_PCT=$plant perl -0pi -e 's/(\t\tm\.markEnd\(\)\n\t\}\)\n)/$1\tif name == PhaseMSMH { \/\/ planted: +$ENV{PLANT_PCT}%\n\t\tspin, d := time.Now(), time.Since(before.at)*$ENV{PLANT_PCT}\/100\n\t\tfor time.Since(spin) < d {\n\t\t}\n\t}\n/' prover/phase.go
  grep -q "planted: +$plant%" prover/phase.go || { echo "compare-fpr: prover/phase.go changed; update the planting anchor (m.markEnd() closing pprof.Do in meter.run)" >&2; exit 1; }
  go build ./prover/
  git -c user.name=bench -c user.email=bench@localhost commit -qam "bench: msm_h $plant% slower"
  head=$(git rev-parse HEAD)
  cd "$top"
  # PREPARE builds each commit's own binary below; nothing here runs one.
  [ -n "${PREPARE:-}" ] || go build -o "$work/perfbot" ./cmd/perfbot
  repo=$work/repo bin=$work/perfbot
fi

if [ -n "${PREPARE:-}" ]; then
  [ -z "${REPO:-}" ] || { echo "compare-fpr: PREPARE makes a repository; it does not take REPO" >&2; exit 2; }
  [ ! -e "$repo/.perfbot.yml" ] || { echo "compare-fpr: PREPARE writes .perfbot.yml itself; it does not combine with PROVE_COUNT, CPUS, PROFILE or ORDER" >&2; exit 2; }
  mkdir -p "$PREPARE"
  prep=$(cd "$PREPARE" && pwd)
  rm -rf "$prep/repo" "$prep/fpr.bundle"
  git clone -q "$repo" "$prep/repo"
  cd "$prep/repo"
  # Each commit carries the binary built from its own source, so the GPU
  # host measures exactly what was planted here.
  prebuilt() { git -C "$repo" checkout -q "$1" && (cd "$repo" && go build -o "$prep/repo/bench-perfbot" ./cmd/perfbot); }
  git checkout -q -B fpr "$base"
  prebuilt "$base"
  cat > .perfbot.yml <<'YML'
# compare-fpr.sh PREPARE: the default config, built by copying the
# commit's prebuilt binary (the GPU host has no Go).
build:
  - [cp, bench-perfbot, "${PERFBOT_OUT}/perfbot"]
benchmarks:
  - name: prove
    command: ["${PERFBOT_OUT}/perfbot", prove]
    args: [--constraints, "2^16", --count, "1", --warmup, "1", --srs, random, --quiet]
    cpus: auto
    cpuprofile: --cpuprofile
YML
  [ -n "${ALPHA:-}" ] && printf 'thresholds:\n  alpha: %s\n' "$ALPHA" >> .perfbot.yml
  git add -f bench-perfbot .perfbot.yml
  git -c user.name=bench -c user.email=bench@localhost commit -qm "bench: the base with its prebuilt perfbot"
  git -C "$repo" diff "$base" "$head" | git apply --index
  prebuilt "$head"
  git add -f bench-perfbot
  git -c user.name=bench -c user.email=bench@localhost commit -qm "bench: msm_h $plant% slower, with its prebuilt perfbot"
  git bundle create -q "$prep/fpr.bundle" HEAD fpr
  echo "prepared $prep/repo (HEAD~1 $(git rev-parse --short HEAD~1) the base, HEAD $(git rev-parse --short HEAD) planted +$plant%) and $prep/fpr.bundle"
  exit 0
fi

verdicts() { # file → "overall msm_h-verdict explained_by rounds msm_h-mde msm_h-delta"
  python3 - "$1" <<'PY'
import json, sys
try:
    r = json.load(open(sys.argv[1]))
except ValueError:
    print("failed - - 0 - -")
    sys.exit()
row = [p for p in r["phases"] if p["phase"] == "msm_h" and p["unit"] == "sec/op"]
att = r.get("attribution") or [{}]
looks = (r.get("sequential") or {}).get("looks") or [{}]
fmt = lambda x: "-" if x is None else "%.2f" % x
row = row[0] if row else {}
change = row.get("shift_pct", row.get("delta_pct"))
print(r["verdict"], row.get("verdict", "-"), ",".join(att[0].get("explained_by") or []) or "-",
      looks[-1].get("runs", 0), fmt(row.get("mde_pct")), fmt(change))
PY
}

extra=()
[ -n "${MAX_COUNT:-}" ] && extra+=(--max-count "$MAX_COUNT")
if [ "${LOAD:-0}" -gt 0 ]; then
  "$top/bench/load.sh" 86400 "$LOAD" >> "$out/load.txt" 2>&1 &
  loadpid=$!
  echo "load: $LOAD workers (bench/load.sh), pid $loadpid"
fi
failed=(); fp=0; found=0; ran_aa=0; ran_planted=0; rounds_aa=(); rounds_planted=(); misses=()
for i in $(seq 1 "$n"); do
  for kind in ${KINDS:-aa planted}; do
    h=$base; [ "$kind" = planted ] && h=$head
    f="$out/$kind-$i.json"
    if [ ! -s "$f" ] && [ -n "$until" ] && [ "$(date +%s)" -ge "$until" ]; then continue; fi
    if [ ! -s "$f" ]; then
      "$bin" compare --repo "$repo" --base "$base" --head "$h" --format json --quiet \
        --db "$out/bench.db" --data-dir "$work/data" "${extra[@]}" > "$f.tmp" || true
      mv "$f.tmp" "$f"
    fi
    read -r overall msmh explained rounds mde delta <<<"$(verdicts "$f")"
    echo "$kind $i: verdict=$overall msm_h=$msmh (Δ $delta%, MDE $mde%) explained_by=$explained rounds=$rounds"
    # A comparison that failed measured nothing: it is neither a quiet A/A
    # nor a missed detection, so it is listed and left out of both counts.
    if [ "$overall" = failed ]; then failed+=("$kind $i"); continue; fi
    if [ "$kind" = aa ]; then
      ran_aa=$((ran_aa+1)); rounds_aa+=("$rounds")
      if [ "$overall" = regression ] || [ "$overall" = improvement ]; then fp=$((fp+1)); fi
    else
      ran_planted=$((ran_planted+1)); rounds_planted+=("$rounds")
      if [ "$msmh" = regression ] && [[ "$explained" == msm_h* ]]; then found=$((found+1)); else misses+=("planted $i: $overall, msm_h $msmh, Δ $delta%, MDE $mde% (planted +$plant%), rounds $rounds"); fi
    fi
  done
done
if [ -n "$loadpid" ]; then { kill "$loadpid"; wait "$loadpid"; } 2>/dev/null || true; loadpid=; fi

median() { printf '%s\n' "$@" | sort -n | awk '{a[NR]=$1} END {if (NR) print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2); else print "-"}'; }
cpupper() { # k n → exact 95% upper bound of a binomial proportion, in percent
  python3 -c "
import math, sys
k, n = int(sys.argv[1]), int(sys.argv[2])
if k >= n: print('100.0'); sys.exit()
def tail(p):  # P(X <= k)
    return sum(math.comb(n, x) * p**x * (1-p)**(n-x) for x in range(k+1))
lo, hi = 0.0, 1.0
for _ in range(60):
    m = (lo + hi) / 2
    if tail(m) > 0.025: lo = m
    else: hi = m
print('%.1f' % (100*hi))" "$1" "$2"
}
{
  echo "compare-fpr $(date -u +%Y-%m-%dT%H:%MZ) on $(hostname) ($(nproc) CPUs), load ${LOAD:-0} workers, planted +$plant% msm_h, ${MAX_COUNT:+max-count $MAX_COUNT, }${ALPHA:+alpha $ALPHA, }order ${ORDER:-default}"
  [ "$ran_aa" -gt 0 ] && echo "A/A false alarms: $fp of $ran_aa (95% upper bound $(cpupper "$fp" "$ran_aa")%), median rounds $(median "${rounds_aa[@]}")"
  [ "$ran_planted" -gt 0 ] && echo "planted +$plant% msm_h found and attributed: $found of $ran_planted, median rounds $(median "${rounds_planted[@]}")"
  for m in "${misses[@]}"; do echo "  miss: $m"; done
  [ "${#failed[@]}" -eq 0 ] || echo "failed, not counted (see OUTDIR's JSON and perfbot's stderr): ${failed[*]}"
  # How busy other processes kept the machine during each comparison's
  # runs, as perfbot compare measured it (the comparisons' stored inputs).
  python3 "$top/bench/meter.py" "$out/bench.db"
} | tee "$out/summary.txt"
true

#!/usr/bin/env bash
# compare-fpr.sh OUTDIR [N] — how often perfbot compare cries wolf, and how
# often it finds a real 5% slowdown, on this machine with the default config
# (the prover at 2^16 constraints, 10 runs a side, up to 30).
#
# It clones this repository into a temporary directory, adds one commit that
# makes the msm_h phase of every proof exactly 5% slower (a spin of 1/20 of
# the phase's own time, inside the phase's measurement), then runs N A/A
# comparisons (base against itself) and N planted comparisons (base against
# the slowed commit), alternating. It prints the false-positive rate (A/A
# comparisons with any regression or improvement) and the detection rate
# (planted comparisons whose msm_h row is a regression and explains total's
# change), and leaves every JSON report under OUTDIR.
#
# Levers against noise (default: unset, the default config): PROVE_COUNT=K
# makes K measured proofs per process (the run's value is their median);
# CPUS=LIST pins every run to those CPUs (`cpus:` in .perfbot.yml, e.g.
# CPUS=1 to leave CPU 0 to the system). PROFILE=on|off writes the default
# config itself with prove's CPU profile on or off (and `cpus: auto`, as the
# default has, unless CPUS says otherwise), so that two OUTDIRs run with
# PROFILE=on and PROFILE=off, alternately, measure what profiling costs
# detection. Any of these commits a .perfbot.yml to the base revision.
# MAX_COUNT=M passes --max-count M (the cap on runs a side while a phase is
# inconclusive). KINDS="planted" (or "aa") runs only that
# kind; a measurement too long for one sitting can be split that way. An
# OUTDIR that already holds a kind-i.json skips that comparison, so an
# interrupted run resumes where it stopped.
set -euo pipefail
out=${1:?usage: compare-fpr.sh OUTDIR [N]}
n=${2:-20}
case ${PROFILE:-} in '' | on | off) ;; *) echo "compare-fpr: PROFILE is on or off, not '$PROFILE'" >&2; exit 2 ;; esac
top=$(git rev-parse --show-toplevel)
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

git clone -q "$top" "$work/repo"
cd "$work/repo"
if [ -n "${PROVE_COUNT:-}${CPUS:-}${PROFILE:-}" ]; then
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
  elif [ -n "${PROFILE:-}" ]; then
    echo "    cpus: auto" >> .perfbot.yml
  fi
  [ "${PROFILE:-}" = on ] && echo "    cpuprofile: --cpuprofile" >> .perfbot.yml
  git add .perfbot.yml
  git -c user.name=bench -c user.email=bench@localhost commit -qm "bench: prove --count ${PROVE_COUNT:-1} cpus ${CPUS:-${PROFILE:+auto}} profile ${PROFILE:-off}"
fi
base=$(git rev-parse HEAD)
# The spin goes right after the phase's labelled span (pprof.Do, whose
# callback ends with m.markEnd()), inside its measurement (before … after).
perl -0pi -e 's/(\t\tm\.markEnd\(\)\n\t\}\)\n)/$1\tif name == PhaseMSMH { \/\/ planted: +5%\n\t\tfor spin := time.Now(); time.Since(spin) < time.Since(before.at)\/21; {\n\t\t}\n\t}\n/' prover/phase.go
grep -q 'planted: +5%' prover/phase.go || { echo "compare-fpr: prover/phase.go changed; update the planting anchor (m.markEnd() closing pprof.Do in meter.run)" >&2; exit 1; }
go build ./prover/
git -c user.name=bench -c user.email=bench@localhost commit -qam "bench: msm_h 5% slower"
head=$(git rev-parse HEAD)
cd "$top"
go build -o "$work/perfbot" ./cmd/perfbot

verdicts() { # file → "overall msm_h-verdict explained_by"
  python3 - "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
row = [p for p in r["phases"] if p["phase"] == "msm_h" and p["unit"] == "sec/op"]
att = r.get("attribution") or [{}]
print(r["verdict"], row[0]["verdict"] if row else "-", ",".join(att[0].get("explained_by") or []) or "-")
PY
}

extra=()
[ -n "${MAX_COUNT:-}" ] && extra+=(--max-count "$MAX_COUNT")
fp=0; found=0; ran_aa=0; ran_planted=0
for i in $(seq 1 "$n"); do
  for kind in ${KINDS:-aa planted}; do
    h=$base; [ "$kind" = planted ] && h=$head
    f="$out/$kind-$i.json"
    if [ ! -s "$f" ]; then
      "$work/perfbot" compare --repo "$work/repo" --base "$base" --head "$h" --format json --quiet \
        --db "$out/bench.db" --data-dir "$work/data" "${extra[@]}" > "$f.tmp" || true
      mv "$f.tmp" "$f"
    fi
    [ "$kind" = aa ] && ran_aa=$((ran_aa+1)) || ran_planted=$((ran_planted+1))
    read -r overall msmh explained <<<"$(verdicts "$f")"
    echo "$kind $i: verdict=$overall msm_h=$msmh explained_by=$explained"
    if [ "$kind" = aa ] && { [ "$overall" = regression ] || [ "$overall" = improvement ]; }; then fp=$((fp+1)); fi
    if [ "$kind" = planted ] && [ "$msmh" = regression ] && [[ "$explained" == msm_h* ]]; then found=$((found+1)); fi
  done
done
[ "$ran_aa" -gt 0 ] && echo "A/A false positives: $fp of $ran_aa"
[ "$ran_planted" -gt 0 ] && echo "planted +5% msm_h found and attributed: $found of $ran_planted"
true

#!/usr/bin/env bash
# bench/gpu-set.sh KIND N RESULTS — a set of N comparisons of one kind on
# the GPU host with perfbot compare itself, the shipped GPU config
# (deploy/perfbot-gpu.example.yml: 2^20 constraints, 5 proofs a run,
# resident processes, α 0.01, cap 60), one line per comparison appended to
# RESULTS as it ends. Resumable: it counts the lines of KIND already in
# RESULTS and runs only what is missing, until DEADLINE; run it again (a
# later device call) to go on. Kinds:
#
#   aa         A/A: one build against itself
#   msm        +1.25 ms device time in msm_h's accumulation (about +5%)
#   synthesis  +SYNTH_NS of CPU in synthesis (default 13 ms: about +5% of
#              its 260 ms on the H100)
#   critical   +G2_NS of CPU in the host's G2 MSM, the longer branch beside
#              the device's G1 MSMs (default 22.6 ms: about +5% of total)
#
# Head is the same build as base with the plant as a variant (head args
# through bench/plant-msm.sh), so one build serves every comparison. Needs
# build/go/perfbot built with the test hooks, on a machine with Go:
#
#   go build -tags perfbot_test_hooks -ldflags=-s -o build/go/perfbot ./cmd/perfbot
#
#   DEADLINE   seconds from the start after which no comparison starts
#              (default 500)
#   MIN_LEFT   seconds a comparison needs to start (default 330: an A/A to
#              the cap takes about 5 minutes)
#   WORK       where the build and the data live between calls on one host
#              (default /tmp/perfbot-gpu-set)
#   PAIRED     1: thresholds.paired (the rounds' own ratios decide;
#              docs/statistics.md); the result lines say paired=1
#   CUDA_ARCH  default sm_90
set -uo pipefail
kind=${1:?usage: bench/gpu-set.sh KIND N RESULTS}
want=${2:?usage: bench/gpu-set.sh KIND N RESULTS}
results=${3:?usage: bench/gpu-set.sh KIND N RESULTS}
case $kind in
aa) head_args="" ;;
msm) head_args="--plant-msm 2097151:1250000" ;;
synthesis) head_args="--plant-synthesis ${SYNTH_NS:-13000000}" ;;
critical) head_args="--plant-g2 ${G2_NS:-22600000}" ;;
*) echo "gpu-set: kind $kind: want aa, msm, synthesis or critical" >&2; exit 2 ;;
esac
top=$(cd "$(dirname "$0")/.." && pwd)
perfbot=$top/build/go/perfbot
[ -x "$perfbot" ] || { echo "gpu-set: no $perfbot: build it first (see the header)" >&2; exit 2; }
work=${WORK:-/tmp/perfbot-gpu-set${PAIRED:+-paired$PAIRED}}
repo=$work/repo
arch=${CUDA_ARCH:-sm_90}
if [ ! -d "$repo/.git" ]; then
	mkdir -p "$repo/bench"
	cp -r "$top/Makefile" "$top/cuda" "$repo/"
	cp "$top/bench/plant-msm.sh" "$repo/bench/"
	cp "$perfbot" "$repo/bench-perfbot"
	cat > "$repo/.perfbot.yml" <<YML
build:
  - [cp, bench-perfbot, "\${PERFBOT_OUT}/perfbot"]
  - [make, cuda, "BUILD=\${PERFBOT_OUT}", "NVFLAGS=-O3 -std=c++17 -arch=$arch -lineinfo -DPERFBOT_TEST_HOOKS"]
benchmarks:
  - name: prove-gpu
    command: [sh, bench/plant-msm.sh, "\${PERFBOT_OUT}/perfbot", prove]
    args: [--backend, gpu, --cuda-lib, "\${PERFBOT_OUT}/libperfbot_cuda.so",
           --constraints, "2^20", --srs, random, --count, "5", --warmup, "1", --quiet]
    cpus: auto
    cpuprofile: --cpuprofile
    resident: true
count: 10
warmup: 1
max_count: 60
order: random
thresholds:
  alpha: 0.01
  min_change_pct: 1.0
$( [ "${PAIRED:-0}" = 1 ] && echo "  paired: true" )
YML
	git -C "$repo" init -q
	git -C "$repo" add -A
	git -C "$repo" -c user.name=perfbot -c user.email=perfbot@localhost commit -qm "the shipped GPU config on a test build"
fi
gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
t0=$(date +%s)
touch "$results"
while :; do
	done_n=$(grep -c "kind=$kind paired=${PAIRED:-0} " "$results" || true)
	if [ "$done_n" -ge "$want" ]; then
		echo "gpu-set: $kind: $done_n of $want done"
		exit 0
	fi
	left=$(( ${DEADLINE:-500} - ($(date +%s) - t0) ))
	if [ "$left" -lt "${MIN_LEFT:-330}" ]; then
		echo "gpu-set: $kind: $done_n of $want done; $left s left, not enough for another: run again"
		exit 0
	fi
	args=(compare --repo "$repo" --base HEAD --head HEAD --data-dir "$work/data" --db "$work/perfbot.db" --format json)
	[ -n "$head_args" ] && args+=(--head-args "$head_args")
	start=$(date +%s)
	timeout "$left" "$perfbot" "${args[@]}" > "$work/report.json" 2> "$work/compare.log"
	rc=$?
	secs=$(( $(date +%s) - start ))
	if [ "$rc" -ne 0 ] && [ "$rc" -ne 1 ]; then
		echo "gpu-set: $kind: compare exited $rc after $secs s; last lines:" >&2
		tail -5 "$work/compare.log" >&2
		exit "$rc"
	fi
	KIND=$kind GPU="$gpu" SECS=$secs PAIRED=${PAIRED:-0} python3 - "$work/report.json" >> "$results" <<'PY'
import json, os, sys, datetime
r = json.load(open(sys.argv[1]))
kind = os.environ["KIND"]
planted = {"aa": None, "msm": "msm_h", "synthesis": "synthesis", "critical": "msm_b2"}[kind]
rows = {p.get("phase", ""): p for p in r["phases"] if p["unit"] == "sec/op" and p["benchmark"].startswith("Prove/")}
def cell(name):
    p = rows.get(name)
    if p is None:
        return name + "=absent"
    ch = (p["head_value"] - p["base_value"]) / p["base_value"] * 100 if p.get("base_value") else float("nan")
    return "%s=%+.2f%%[%+.2f,%+.2f]:%s" % (name, ch, p.get("delta_lo_pct", float("nan")), p.get("delta_hi_pct", float("nan")), p["verdict"])
share = ""
for a in r.get("attribution") or []:
    for ph in a.get("phases") or []:
        if ph.get("phase") == planted and ph.get("share_pct") is not None:
            share = " share=%.1f%%" % ph["share_pct"]
alarms = [k for k, p in rows.items() if p["verdict"] in ("regression", "improvement")]
print("%s gpu=%r kind=%s paired=%s verdict=%s rounds=%d secs=%s %s %s%s alarms=%s" % (
    datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), os.environ["GPU"], kind, os.environ.get("PAIRED", "0"),
    r["verdict"], r["runs"]["base"]["total"], os.environ["SECS"],
    cell(planted) if planted else "", cell("total"), share, ",".join(sorted(alarms)) or "none"))
PY
	tail -1 "$results"
done

#!/bin/sh
# Bisects a known performance commit of an outside library with perfbot,
# several times, and appends one line a bisection to OUT: the commit it
# named, whether exact, the wall time, the runs it made and the machine's
# load. The library is cespare/xxhash: 5132688 "Remove bounds checks from
# purego Sum64" made Sum64/4B about 17% faster (its message: 676 → 820
# MB/s with -tags purego), in the 16 first-parent commits 15613bb..4467c19.
# Its benchmarks are plain Go benchmarks without phase= sub-benchmarks, so
# bisect searches the benchmark's own value.
#
# Usage: bench/bisect-outside.sh REPO [N] [LOAD]   (from the repository's top)
#   REPO  a clone of github.com/cespare/xxhash (a bare one will do)
#   N     bisections (default 5)
#   LOAD  "load" to run each beside one busy loop per core
# OUT is bench/results/bisect-outside.txt.
set -eu
repo=$1
n=${2:-5}
load=${3:-}
out=bench/results/bisect-outside.txt
tmp=$(mktemp -d)
busy=""
stop_busy() { [ -z "$busy" ] || kill $busy 2>/dev/null || true; busy=""; }
trap 'stop_busy; rm -rf "$tmp"' EXIT
go build -o "$tmp/perfbot" ./cmd/perfbot
cat > "$tmp/xxhash.yml" <<'YML'
# cespare/xxhash's pure-Go Sum64 of 4 bytes, timed by the Go test binary.
build:
  - [go, test, -c, -tags, purego, -o, "${PERFBOT_OUT}/xxhash.test", .]
benchmarks:
  - name: sum64
    # One CPU: on the shared 2-core machine the two vCPUs ran this 4-byte
    # hash at 3.6 and 6.7 ns at the same minute.
    cpus: auto
    command: ["${PERFBOT_OUT}/xxhash.test", -test.run, "^$", -test.bench, "^BenchmarkSum64$/^4B$", -test.benchtime, "2000000x"]
count: 10
warmup: 1
max_count: 60
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 3
  # Each round's ratios: the CPU's speed drifts between rounds.
  paired: true
YML
mkdir -p "$(dirname "$out")"
for i in $(seq "$n"); do
	if [ "$load" = load ]; then
		for _ in $(seq "$(nproc)"); do sh -c 'while :; do :; done' & busy="$busy $!"; done
	fi
	start=$(date +%s)
	code=0
	GOFLAGS=-mod=mod "$tmp/perfbot" bisect --repo "$repo" --good 15613bb --bad 4467c19 --config "$tmp/xxhash.yml" \
		--db "$tmp/perfbot.db" --data-dir "$tmp/data" --format json > "$tmp/bisect.json" 2> "$tmp/bisect.err" || code=$?
	wall=$(( $(date +%s) - start ))
	loadavg=$(cut -d' ' -f1 /proc/loadavg)
	stop_busy
	python3 - "$tmp/bisect.json" "$code" "$wall" "$loadavg" "$load" "$(git rev-parse --short HEAD)" >> "$out" <<'PY'
import json, sys, datetime
path, code, wall, loadavg, load, rev = sys.argv[1:]
try:
    r = json.load(open(path))
except Exception as e:
    print(f"{datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ} perfbot {rev} exit {code} after {wall}s: no report ({e})")
    sys.exit()
fb = r["first_bad"]["sha"][:7]
exact = r.get("confirmed") and not r.get("stopped") and len(r.get("candidates") or []) <= 1
row = r.get("confirmation") or r["change"]
measured = sum(p["measured"] for p in r["probes"])
reused = sum(p["reused"] for p in r["probes"])
right = "right" if fb == "5132688" else ("range holding it" if "5132688" in [c["sha"][:7] for c in (r.get("candidates") or [])] else "WRONG")
cands = " ".join(c["sha"][:7] for c in (r.get("candidates") or []))
print(f"{datetime.datetime.utcnow():%Y-%m-%dT%H:%MZ} perfbot {rev} exit {code} {wall}s load {loadavg}{' (busy loops)' if load else ''}: "
      f"first bad {fb} ({right}), exact {bool(exact)}{', candidates ' + cands if cands else ''}, "
      f"{row['shift_pct']:+.1f}% beside the last good, {len(r['probes'])-2} probes, {measured} runs measured, {reused} reused")
PY
	tail -1 "$out"
	rm -rf "$tmp/perfbot.db" "$tmp/data/builds"
done

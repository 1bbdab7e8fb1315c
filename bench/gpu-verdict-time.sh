#!/usr/bin/env bash
# bench/gpu-verdict-time.sh OUT — how long a pull request's verdict takes
# on the GPU host, builds included (issue 46's targets), with the shipped
# GPU config's build steps (deploy/perfbot-gpu.example.yml: inputs-keyed,
# both sides at once) but for perfbot's own build: the host has no Go, so
# that step copies a perfbot built elsewhere (carried as build/go/perfbot),
# declaring the same inputs. Three comparisons, each timed from perfbot
# compare's start to its verdict, one line each to OUT/verdict-time.txt:
#
#   cuda-cold    a CUDA change, nothing cached (both libraries built)
#   cuda-base    another CUDA change, the base's build cached
#   go-base      a Go-only change, the base cached (the library reused)
#
# Each head changes a comment, so the kernels and the proofs are the same
# and the verdict is an A/A in substance. The repository is a fresh git
# repository of this tree's Makefile, cuda/, go.mod and cmd/ (the Go step's
# inputs). Build perfbot here first:
#
#   CGO_ENABLED=1 go build -o build/go/perfbot ./cmd/perfbot
#
#   MAX_COUNT  the comparisons' cap on runs a side (default 20)
set -uo pipefail
out=${1:?usage: bench/gpu-verdict-time.sh OUT}
mkdir -p "$out"
top=$(cd "$(dirname "$0")/.." && pwd)
perfbot=$top/build/go/perfbot
[ -x "$perfbot" ] || { echo "gpu-verdict-time: no $perfbot: build it first (see the header)" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
repo=$work/repo
mkdir -p "$repo"
cp -r "$top/Makefile" "$top/cuda" "$top/go.mod" "$repo/"
mkdir -p "$repo/cmd" && echo "// the Go step's inputs: a Go-only change edits this" > "$repo/cmd/version.go"
cp "$perfbot" "$work/perfbot"
git -C "$repo" init -q -b main
git -C "$repo" add -A
git -C "$repo" -c user.name=perfbot -c user.email=perfbot@example.com commit -qm base
commit() { # $1: file to append a comment to, $2: message
	echo "// $2" >> "$repo/$1"
	git -C "$repo" -c user.name=perfbot -c user.email=perfbot@example.com commit -qam "$2"
	git -C "$repo" rev-parse HEAD
}
base=$(git -C "$repo" rev-parse HEAD)
cfg=$work/gpu.yml
sed -e "s|run: \[go, build, -o, \"\${PERFBOT_OUT}/perfbot\", ./cmd/perfbot\]|run: [cp, \"$work/perfbot\", \"\${PERFBOT_OUT}/perfbot\"]|" \
	-e "s|^max_count: .*|max_count: ${MAX_COUNT:-20}|" "$top/deploy/perfbot-gpu.example.yml" > "$cfg"
grep -q "run: \[cp," "$cfg" || { echo "gpu-verdict-time: could not replace the Go build step in $cfg" >&2; exit 2; }
data=$work/data
measure() { # $1: name, $2: head
	local start end code
	start=$(date +%s.%N)
	"$perfbot" compare --repo "$repo" --base "$base" --head "$2" --config "$cfg" --db "$work/perfbot.db" \
		--data-dir "$data" --format json > "$out/$1.json" 2> "$out/$1.log"
	code=$?
	end=$(date +%s.%N)
	python3 - "$1" "$code" "$start" "$end" "$out/$1.json" "$out/$1.log" >> "$out/verdict-time.txt" <<'PY'
import json, sys
name, code, start, end, rep, log = sys.argv[1:]
wall = float(end) - float(start)
try:
    r = json.load(open(rep))
    verdict = r["verdict"]; runs = r["runs"]["base"]["total"]
except Exception:
    verdict, runs = "no report", 0
print(f"{name}: exit {code}, {wall:.1f} s from start to verdict ({verdict}, {runs} runs a side)")
PY
	tail -1 "$out/verdict-time.txt"
}
nvidia-smi -L > "$out/device.txt" 2>&1
measure cuda-cold "$(commit cuda/msm.cuh 'a CUDA change')"
measure cuda-base "$(commit cuda/ntt.cuh 'another CUDA change')"
measure go-base "$(commit cmd/version.go 'a Go-only change')"

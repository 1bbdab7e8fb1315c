#!/usr/bin/env bash
# bench/gpu-overhead.sh OUT — where one GPU prover process's time goes, at
# the shipped GPU config's size (2^20 constraints, 5 proofs after 1
# warm-up): process start, CUDA library and context, the shape synthesis,
# keys (random points, a real setup, the key cache), the warm-up proof,
# the measured proofs. Each stage is read from the prover's own log lines
# (slog's time= stamps, to the millisecond) of REPS processes; the
# process's wall time from date before and after.
#
# Needs build/go/perfbot (built on a machine with Go) and
# build/libperfbot_cuda.so (make cuda) beside this repository.
#
#   REPS   processes per configuration (default 3)
#   SIZE   constraints (default 2^20)
set -uo pipefail
out=${1:?usage: bench/gpu-overhead.sh OUT}
mkdir -p "$out"
top=$(cd "$(dirname "$0")/.." && pwd)
perfbot=$top/build/go/perfbot
lib=${CUDA_LIB:-$top/build/libperfbot_cuda.so}
reps=${REPS:-3}
size=${SIZE:-2^20}
keys=$(mktemp -d)
ms() { date +%s%3N; }
# stage times from a prove log: each line's time= stamp against the start
stages() {
	local start=$1 log=$2
	awk -v start="$start" '
		match($0, /time=[^ ]+/) {
			ts = substr($0, RSTART+5, RLENGTH-5)
			cmd = "date -d " ts " +%s%3N"; cmd | getline t; close(cmd)
			msg = $0; sub(/.*msg=/, "", msg); sub(/ .*/, "", msg)
			printf "  +%6d ms  %s\n", t - start, msg
		}' "$log"
}
run() { # label, processes, args...
	local label=$1 n=$2; shift 2
	for i in $(seq 1 "$n"); do
		local log=$out/$label-$i.log t0 t1
		t0=$(ms)
		"$perfbot" prove --backend gpu --cuda-lib "$lib" --constraints "$size" --count 5 --warmup 1 --out "$out/$label-$i.txt" "$@" 2> "$log"
		local rc=$?
		t1=$(ms)
		echo "$label #$i: exit $rc, wall $((t1 - t0)) ms" | tee -a "$out/summary.txt"
		stages "$t0" "$log" | tee -a "$out/summary.txt"
	done
}
t0=$(ms); "$perfbot" version > /dev/null; echo "perfbot version: $(( $(ms) - t0 )) ms (process start)" | tee -a "$out/summary.txt"
run random "$reps" --srs random
# A real setup, cached by shape in the key directory: the first process
# makes the keys (not timed as a round would be), the others load them.
run setup-first 1 --srs setup --key-dir "$keys"
run setup-cached "$reps" --srs setup --key-dir "$keys"
du -sh "$keys" | tee -a "$out/summary.txt"
rm -rf "$keys"

#!/usr/bin/env bash
# bench/synth-noise.sh OUT — is synthesis's proof-to-proof noise on a host
# the CPU's own, or the prover's company? Synthesis of the sha256 chain
# (2^18, the largest BenchmarkSynthesis size; one thread) runs as its own
# process, three placements interleaved in a fresh random order each round:
#
#   pin1   one CPU (taskset -c PIN, GOMAXPROCS=1)
#   all1   CPUs 1..N-1, GOMAXPROCS=1 (the scheduler may move it)
#   all15  CPUs 1..N-1, GOMAXPROCS unset (as perfbot prove runs)
#
# Each process writes one benchmark line (ns/op: the mean of COUNT
# syntheses) to OUT/ARM.txt. Read them where there is Go:
#   go run golang.org/x/perf/cmd/benchstat pin1=OUT/pin1.txt all1=OUT/all1.txt all15=OUT/all15.txt
# No Go is needed on the host:
#   go test -c -ldflags=-s -o build/go/circuit.test ./prover/circuit
#
#   ROUNDS  rounds (default 40)   COUNT  syntheses a process (default 3)
#   PIN     the CPU of pin1 (default: the middle one)
set -euo pipefail
out=${1:?usage: bench/synth-noise.sh OUT}
bin=${BIN:-build/go/circuit.test}
[ -x "$bin" ] || { echo "synth-noise: no $bin; build it with go test -c -o $bin ./prover/circuit" >&2; exit 2; }
n=$(nproc)
pin=${PIN:-$((n / 2))}
all="1-$((n - 1))"
[ "$n" -gt 1 ] || all=0
mkdir -p "$out"
for _ in $(seq 1 "${ROUNDS:-40}"); do
  for a in $(printf 'pin1\nall1\nall15\n' | shuf); do
    case $a in
      pin1) cmd=(taskset -c "$pin" env GOMAXPROCS=1 "$bin") ;;
      all1) cmd=(taskset -c "$all" env GOMAXPROCS=1 "$bin") ;;
      all15) cmd=(taskset -c "$all" "$bin") ;;
    esac
    "${cmd[@]}" -test.run '^$' -test.bench 'Synthesis/constraints=262144$' \
      -test.benchtime "${COUNT:-3}x" -test.count 1 | grep '^BenchmarkSynthesis' >> "$out/$a.txt"
  done
done

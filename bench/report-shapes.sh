#!/bin/sh
# Measures, with a real perfbot compare, one program whose change moves
# its phases in the shapes a shift alone misreads, and writes the brief
# --verbose text report to OUT.verbose.txt (OUT: docs/examples/shapes):
#   parse  2x faster and solve +10% slower, total faster (a trade-off);
#   retry  runs in 2 of 10 runs at base and 6 of 10 at head, else 0
#          (zero-inflated);
#   gc     the same work on average, spread 0.5x-1.5x at head (spread
#          only);
#   solve's allocs/op  19 in 4 of 10 runs at base and 6 of 10 at head,
#          else 79 (a bimodal count: medians 79 and 19, shift 0);
# in two benchmark entries of one config (work and work-small).
# Usage: bench/report-shapes.sh [OUT]   (from the repository's top; ~2 min)
set -eu
out=${1:-docs/examples/shapes}
top=$(pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
repo=$tmp/repo
mkdir -p "$repo"
git -C "$repo" init -q -b main
prog() { # $1: parse loops, $2: solve loops, $3: retry share (of 10), $4: gc spread (percent), $5: share of runs (of 10) with 19 allocs/op
	cat <<GO
package main

import (
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"syscall"
	"unsafe"
)

var sink uint64

func spin(n int) {
	x := sink | 1
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	sink = x
}

// threadCPU is this thread's CPU time in ns: the phases time themselves
// by CPU, not wall clock, so a busy neighbour does not move them.
func threadCPU() int64 {
	var ts syscall.Timespec
	syscall.Syscall(syscall.SYS_CLOCK_GETTIME, 3, uintptr(unsafe.Pointer(&ts)), 0)
	return ts.Nano()
}

func main() {
	runtime.LockOSThread()
	name, scale := "Work", 1
	if len(os.Args) > 1 && os.Args[1] == "small" {
		name, scale = "WorkSmall", 4
	}
	const n = 4_000_000
	phases := []struct {
		name  string
		loops int
	}{
		{"parse", $1 / scale},
		{"solve", $2 / scale},
		{"retry", 0},
		{"gc", n / scale},
	}
	if rand.IntN(10) < $3 {
		phases[2].loops = 2 * n / scale
	}
	phases[3].loops = int(float64(phases[3].loops) * (1 + float64($4)/100*(2*rand.Float64()-1)))
	allocs := 79
	if rand.IntN(10) < $5 {
		allocs = 19
	}
	start := threadCPU()
	for _, p := range phases {
		t := threadCPU()
		spin(p.loops)
		d := threadCPU() - t
		if p.loops == 0 {
			d = 0
		}
		if p.name == "solve" {
			fmt.Printf("Benchmark%s/phase=%s 1 %d ns/op %d allocs/op\n", name, p.name, d, allocs)
			continue
		}
		fmt.Printf("Benchmark%s/phase=%s 1 %d ns/op\n", name, p.name, d)
	}
	fmt.Printf("Benchmark%s/phase=total 1 %d ns/op\n", name, threadCPU()-start)
}
GO
}
printf 'module example.com/shapes\n\ngo 1.26\n' > "$repo/go.mod"
prog "2 * n" "3 * n" 2 0 4 > "$repo/main.go"
git -C "$repo" add -A && git -C "$repo" -c user.name=perfbot -c user.email=perfbot@example.com commit -qm "base"
base=$(git -C "$repo" rev-parse HEAD)
prog "n" "33 * n / 10" 6 50 6 > "$repo/main.go"
git -C "$repo" -c user.name=perfbot -c user.email=perfbot@example.com commit -qam "head: parse 2x faster, solve +10%, retry more often, gc spread, fewer allocations more often"
head=$(git -C "$repo" rev-parse HEAD)
cat > "$tmp/shapes.yml" <<'YML'
# Two benchmark entries of one program.
build:
  - [go, build, -o, "${PERFBOT_OUT}/shapes", .]
benchmarks:
  - name: work
    command: ["${PERFBOT_OUT}/shapes"]
  - name: work-small
    command: ["${PERFBOT_OUT}/shapes", small]
count: 30
warmup: 1
max_count: 30
timeout: 1m
thresholds:
  alpha: 0.01
  min_change_pct: 5
YML
cd "$top"
go build -o "$tmp/perfbot" ./cmd/perfbot
mkdir -p "$(dirname "$out")"
"$tmp/perfbot" compare --repo "$repo" --base "$base" --head "$head" --config "$tmp/shapes.yml" \
	--db "$tmp/perfbot.db" --data-dir "$tmp/data" --quiet --verbose > "$out.verbose.txt" || true
echo "wrote $out.verbose.txt ($(date -u +%FT%TZ), $(nproc) CPUs)"

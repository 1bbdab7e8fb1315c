#!/bin/bash
# bench/gpu-g2-msm.sh check|time — the G2 MSM on the GPU machine
# (issue 20), in calls of at most 300 s. Needs build/go/gpu.test (and for
# the whole proofs build/go/perfbot.gz) built on the development machine:
#
#   go test -c -ldflags=-s -o build/go/gpu.test ./prover/gpu
#   go build -ldflags=-s -o build/go/perfbot ./cmd/perfbot && gzip -kf build/go/perfbot
#
# check: make cuda (or, when it does not finish in 210 s, the build carried
#        in build/cuda-fallback, made with another nvcc: said in log.txt),
#        the self-test (field, G1 and G2 MSMs), the Go tests of the MSMs
#        against gnark-crypto (G1 and G2) and of whole proofs; then, in the
#        time left, the G2 MSM's timings up to 2^20 (2^G2_BENCH_MAXLOG).
# time:  the G2 MSM's timings to 2^24 (self-test, windows around the
#        default), the pair BenchmarkMultiExpG2 / …Reference (the device
#        against gnark-crypto on this host's cores) at 2^20 and 2^24, and,
#        in the time left, whole proofs at 2^22 with PERFBOT_G2=host and
#        gpu alternated.
set -u
o=${OUT:-/tmp/g2-msm}
mkdir -p "$o"
t0=$(date +%s)
log() { echo "[$(($(date +%s) - t0))s] $*" | tee -a "$o/log.txt"; }
left() { echo $(($1 - ($(date +%s) - t0))); }
lib=$PWD/build/libperfbot_cuda.so
export PERFBOT_CUDA_LIB=$lib

case "${1:-}" in
check)
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$o/gpu.txt" 2>&1
	nproc >>"$o/gpu.txt"
	if [ ! -x build/perfbot_cuda_selftest ]; then
		timeout 210 make -j4 cuda >"$o/make.txt" 2>&1
		rc=$?
		log "make cuda rc $rc"
		if [ $rc != 0 ]; then
			gunzip -c build/cuda-fallback/libperfbot_cuda.so.gz >"$lib" &&
				gunzip -c build/cuda-fallback/perfbot_cuda_selftest.gz >build/perfbot_cuda_selftest && chmod +x build/perfbot_cuda_selftest &&
				log "using the carried fallback build: $(cat build/cuda-fallback/VERSION)"
		fi
	fi
	timeout 80 build/perfbot_cuda_selftest check msm >"$o/selftest.txt" 2>&1
	log "selftest check msm rc $? ($(tail -1 "$o/selftest.txt"))"
	# From the package's folder, as go test runs it (a test reads testdata).
	(cd prover/gpu && timeout "$(left 250)" ../../build/go/gpu.test -test.count=1 -test.v -test.timeout 10m \
		-test.run 'MSM|G2|Kept|ProofsVerify') >"$o/gotest.txt" 2>&1
	log "go test rc $? ($(grep -c '^--- PASS' "$o/gotest.txt") pass, $(grep -c -- '--- FAIL' "$o/gotest.txt") fail, $(grep -c -- '--- SKIP' "$o/gotest.txt") skip)"
	if [ "$(left 285)" -gt 30 ]; then
		timeout "$(left 285)" build/perfbot_cuda_selftest bench-g2 "${G2_BENCH_MAXLOG:-20}" >"$o/bench-g2.txt" 2>&1
		log "bench-g2 ${G2_BENCH_MAXLOG:-20} rc $?"
	fi
	;;
time)
	nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader >"$o/gpu.txt" 2>&1
	[ -x build/perfbot_cuda_selftest ] || { timeout 210 make -j4 cuda >"$o/make.txt" 2>&1; log "make cuda rc $?"; }
	timeout 90 build/perfbot_cuda_selftest bench-g2 24 >"$o/bench-g2.txt" 2>&1
	log "bench-g2 24 rc $?"
	PERFBOT_BENCH_MAXLOG=24 timeout "$(left 200)" build/go/gpu.test -test.run '^$' -test.bench 'MultiExpG2' \
		-test.benchtime 3x -test.v >"$o/gobench.txt" 2>&1
	log "go bench rc $?"
	if [ -f build/go/perfbot.gz ] && [ "$(left 285)" -gt 60 ]; then
		gunzip -c build/go/perfbot.gz >/tmp/perfbot && chmod +x /tmp/perfbot
		for g2 in host gpu host gpu; do
			[ "$(left 285)" -gt 20 ] || break
			PERFBOT_G2=$g2 timeout "$(left 285)" /tmp/perfbot prove --backend gpu --cuda-lib "$lib" --srs random \
				--constraints 2^22 --count 2 --warmup 1 >>"$o/prove-$g2.txt" 2>>"$o/prove-err.txt"
			log "prove 2^22 PERFBOT_G2=$g2 rc $?"
		done
	fi
	;;
*)
	echo "usage: $0 check|time" >&2
	exit 2
	;;
esac

#!/bin/bash
# Carried to the GPU machine in build/lead with perfbot.gz (go build ./cmd/perfbot, gzip), gpu.test (go test -c ./prover/gpu) and cuda.tgz (tar czf cuda.tgz Makefile cuda).
# Issue 20 visit B: make cuda (carried tree), self-test check, 2^24 latency
# (G2 on the device) and the pipeline (K=6) with the memory work, then the
# MSM pairs against gnark-crypto to 2^24. Everything lands in one tarball.
set -u
o=/tmp/vb; mkdir -p $o; t0=$(date +%s); L=$PWD/build/lead
log(){ echo "[$(( $(date +%s)-t0 ))s] $*" | tee -a $o/log.txt; pack; }
left(){ echo $(( $1 - ($(date +%s)-t0) )); }
pack(){ tar -C $o -czf $OUT/visitB.tgz.tmp . && mv $OUT/visitB.tgz.tmp $OUT/visitB.tgz; cp $o/log.txt $OUT/log.txt 2>/dev/null; }
D=${DEADLINE:-540} # seconds this call may run; the steps fit in it
trap pack EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; nvcc --version | tail -1; } > $o/gpu.txt 2>&1
mkdir -p /tmp/t/prover/gpu && tar xzf $L/cuda.tgz -C /tmp/t
( cd /tmp/t && s=$(date +%s); timeout 240 make -j16 cuda > $o/make.txt 2>&1; echo "rc $? in $(( $(date +%s)-s )) s" >> $o/make.txt )
log "make: $(tail -1 $o/make.txt)"
grep -q "^rc 0" $o/make.txt || exit 1
lib=/tmp/t/build/libperfbot_cuda.so; export PERFBOT_CUDA_LIB=$lib
timeout 100 /tmp/t/build/perfbot_cuda_selftest check msm --seed 20261206 > $o/selftest.txt 2>&1
log "selftest check msm rc $? ($(tail -1 $o/selftest.txt))"
gunzip -c $L/perfbot.gz > /tmp/perfbot && chmod +x /tmp/perfbot
GODEBUG=gctrace=1 /usr/bin/time -v timeout $(left $((D-140))) /tmp/perfbot prove --backend gpu --srs random --constraints 2^24 --count 3 --warmup 1 --out $o/p24.txt 2> $o/err24.txt
log "2^24 latency rc $? $(grep Maximum $o/err24.txt)"
if [ "$(left $((D-70)))" -gt 90 ]; then
  /usr/bin/time -v timeout $(left $((D-70))) /tmp/perfbot prove --backend gpu --srs random --constraints 2^24 --pipeline --count 6 --warmup 1 --out $o/pipe24.txt 2> $o/errpipe.txt
  log "2^24 pipeline rc $? $(grep Maximum $o/errpipe.txt)"
fi
if [ "$(left $D)" -gt 40 ]; then
  PERFBOT_BENCH_MAXLOG=24 timeout $(left $D) $L/gpu.test -test.run '^$' -test.bench 'MultiExpG(1Reference|2)' -test.benchtime 3x -test.v > $o/gobench.txt 2>&1
  log "go bench rc $?"
fi
log done

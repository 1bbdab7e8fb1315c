#!/bin/bash
# bench/gpu-proof-2e24.sh — on the GPU machine: the whole GPU proof at 2^24
# constraints (issue 20's targets: latency, pipeline, peak RSS).
# Carried to the GPU machine in build/lead with perfbot.gz (go build ./cmd/perfbot, gzip),
# gpu.test (go test -c ./prover/gpu) and cuda.tgz (tar czf cuda.tgz Makefile cuda).
# Steps: make cuda (its library and self-test come back in $OUT/lib.tgz for later
# visits, e.g. bench/sppark-prebuilt-lib.sh), the 2^24 proof's latency with a CPU
# profile, the pipeline (K=6), then the GPU tests against gnark-crypto.
# Everything lands in $OUT/proof-2e24.tgz, packed after each step. DEADLINE (default 530)
# is the seconds the call may run.
set -u
o=/tmp/vc; mkdir -p $o; t0=$(date +%s); L=$PWD/build/lead
log(){ echo "[$(( $(date +%s)-t0 ))s] $*" | tee -a $o/log.txt; pack; }
left(){ echo $(( $1 - ($(date +%s)-t0) )); }
pack(){ tar -C $o -czf $OUT/proof-2e24.tgz.tmp . && mv $OUT/proof-2e24.tgz.tmp $OUT/proof-2e24.tgz; cp $o/log.txt $OUT/log.txt 2>/dev/null; }
D=${DEADLINE:-530}
trap pack EXIT
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; nvcc --version | tail -1; free -g | head -2; } > $o/gpu.txt 2>&1
mkdir -p /tmp/t/prover/gpu && tar xzf $L/cuda.tgz -C /tmp/t
if [ -f $L/lib.tgz ]; then
  tar xzf $L/lib.tgz -C /tmp/t && echo "carried library" > $o/make.txt
  log "library carried, not built"
else
  ( cd /tmp/t && s=$(date +%s); timeout 240 make -j16 cuda > $o/make.txt 2>&1; echo "rc $? in $(( $(date +%s)-s )) s" >> $o/make.txt )
  log "make: $(tail -1 $o/make.txt)"
  grep -q "^rc 0" $o/make.txt || exit 1
  tar -C /tmp/t -czf $OUT/lib.tgz build/libperfbot_cuda.so build/perfbot_cuda_selftest
fi
lib=/tmp/t/build/libperfbot_cuda.so; export PERFBOT_CUDA_LIB=$lib
gunzip -c $L/perfbot.gz > /tmp/perfbot && chmod +x /tmp/perfbot
/usr/bin/time -v timeout $(left $((D-200))) /tmp/perfbot prove --backend gpu --srs random --constraints 2^24 --count 5 --warmup 1 --cpuprofile $o/cpu24.pprof --out $o/p24.txt 2> $o/err24.txt
log "2^24 latency rc $? $(grep Maximum $o/err24.txt)"
if [ "$(left $((D-90)))" -gt 60 ]; then
  /usr/bin/time -v timeout $(left $((D-90))) /tmp/perfbot prove --backend gpu --srs random --constraints 2^24 --pipeline --count 6 --warmup 1 --out $o/pipe24.txt 2> $o/errpipe.txt
  log "2^24 pipeline rc $? $(grep Maximum $o/errpipe.txt)"
fi
if [ "$(left $D)" -gt 30 ]; then
  ( cd /tmp/t/prover/gpu && timeout $(left $D) $L/gpu.test -test.v -test.count 1 > $o/gputest.txt 2>&1; echo "rc $?" >> $o/gputest.txt )
  log "gpu tests: $(grep -c '^--- PASS' $o/gputest.txt) pass, $(grep -c '^--- FAIL' $o/gputest.txt) fail, $(tail -1 $o/gputest.txt)"
fi
log done

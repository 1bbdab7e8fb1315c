#!/bin/bash
# Carried to the GPU machine in build/lead with what it names (perfbot.gz, gpu.test, g2-cuda.tgz: see the issue 20 notes in BENCHMARKS.md).
# Issue 20 visit A: the G2 branch's make cuda with CUDA 13 (with and
# without -lineinfo, in parallel), self-test, Go tests, the MSM pairs
# against gnark-crypto, then 2^24 proofs with G2 on the device and on the
# host (threads 16), synthesis at 1 and 16 threads.
set -u
o=$OUT; t0=$(date +%s); L=$PWD/build/lead
log(){ echo "[$(( $(date +%s)-t0 ))s] $*" | tee -a $o/log.txt; }
left(){ echo $(( $1 - ($(date +%s)-t0) )); }
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader; nproc; nvcc --version | tail -2; free -g | head -2; } > $o/gpu.txt 2>&1
for v in li noli; do mkdir -p /tmp/$v/prover/gpu && tar xzf $L/g2-cuda.tgz -C /tmp/$v; done
( cd /tmp/li && s=$(date +%s); timeout 280 make -j8 cuda > $o/make-li.txt 2>&1; echo "rc $? in $(( $(date +%s)-s )) s" >> $o/make-li.txt ) &
( cd /tmp/noli && s=$(date +%s); timeout 280 make -j8 cuda NVFLAGS="-O3 -std=c++17 -arch=sm_90" > $o/make-noli.txt 2>&1; echo "rc $? in $(( $(date +%s)-s )) s" >> $o/make-noli.txt ) &
wait
log "make li: $(tail -1 $o/make-li.txt); noli: $(tail -1 $o/make-noli.txt)"
v=li; grep -q "^rc 0" $o/make-li.txt || v=noli
grep -q "^rc 0" $o/make-$v.txt || { log "no build"; exit 1; }
log "using $v"
lib=/tmp/$v/build/libperfbot_cuda.so; export PERFBOT_CUDA_LIB=$lib
timeout 120 /tmp/$v/build/perfbot_cuda_selftest check msm > $o/selftest.txt 2>&1
log "selftest rc $? ($(tail -1 $o/selftest.txt))"
(cd /tmp/$v/prover/gpu && timeout 150 $L/gpu.test -test.count=1 -test.v -test.timeout 10m -test.run 'MSM|G2|Kept|ProofsVerify') > $o/gotest.txt 2>&1
log "go test rc $? ($(grep -c '^--- PASS' $o/gotest.txt) pass, $(grep -c -- '--- FAIL' $o/gotest.txt) fail, $(grep -c -- '--- SKIP' $o/gotest.txt) skip)"
gunzip -c $L/perfbot.gz > /tmp/perfbot && chmod +x /tmp/perfbot
for g2 in gpu host; do
  [ "$(left 520)" -gt 60 ] || break
  extra=""; [ $g2 = gpu ] && extra="--memprofile $o/mem24-gpu.pprof"
  PERFBOT_G2=$g2 /usr/bin/time -v timeout $(left 520) /tmp/perfbot prove --backend gpu --cuda-lib $lib --srs random --constraints 2^24 --count 3 --warmup 1 --threads 16 $extra --out $o/p24-$g2.txt 2> $o/err24-$g2.txt
  log "2^24 G2 $g2 rc $? maxrss $(grep Maximum $o/err24-$g2.txt)"
done
if [ "$(left 520)" -gt 45 ]; then
  timeout $(left 520) /tmp/perfbot prove --constraints 2^24 --phases synthesis --count 3 --warmup 1 --threads 16 --out $o/s16.txt 2>/dev/null; log "synth 16 rc $?"
fi
if [ "$(left 520)" -gt 60 ]; then
  timeout $(left 520) /tmp/perfbot prove --constraints 2^24 --phases synthesis --count 2 --warmup 1 --threads 1 --out $o/s1.txt 2>/dev/null; log "synth 1 rc $?"
fi
if [ "$(left 540)" -gt 60 ]; then
  PERFBOT_BENCH_MAXLOG=24 timeout $(left 540) $L/gpu.test -test.run '^$' -test.bench 'MultiExpG[12]' -test.benchtime 3x -test.v > $o/gobench.txt 2>&1
  log "go bench rc $?"
fi
log done

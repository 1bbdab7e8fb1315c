set -u
o=$OUT; t0=$(date +%s); log(){ echo "[$(( $(date +%s)-t0 ))s] $*" | tee -a $o/log.txt; }
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > $o/gpu.txt 2>&1; nproc >> $o/gpu.txt
make build/libperfbot_cuda.so > $o/make.txt 2>&1; log "make rc $?"
for n in 22 24; do
  /usr/bin/time -v build/go/perfbot prove --backend gpu --cuda-lib build/libperfbot_cuda.so --srs random --constraints 2^$n --count 2 --warmup 1 \
    --cpuprofile $o/cpu$n.pprof --out $o/p$n.txt 2> $o/err$n.txt; log "2^$n rc $?"
done
tar -C $o -czf $o/all.tgz log.txt gpu.txt p22.txt p24.txt err22.txt err24.txt cpu22.pprof cpu24.pprof 2>/dev/null
ls -la $o

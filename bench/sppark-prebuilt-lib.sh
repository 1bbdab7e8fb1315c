#!/bin/bash
# bench/sppark-prebuilt-lib.sh — on the GPU machine: our G1 MSM and NTT beside
# sppark's (bench/sppark.sh run) on a CUDA library built by an earlier call
# (bench/gpu-proof-2e24.sh's $OUT/lib.tgz), so that this call does not spend
# ~3 minutes of device time on make cuda again. Carry build/sppark-src.tar.gz
# (bench/sppark.sh pack, here) and build/lead/lib.tgz (that $OUT/lib.tgz,
# copied there). Results: $OUT/sppark-side-by-side.txt.
set -u
[ -f build/lead/lib.tgz ] || { echo "no build/lead/lib.tgz: carry bench/gpu-proof-2e24.sh's lib.tgz"; exit 2; }
tar xzf build/lead/lib.tgz -C . || exit 2
# Newer than the carried sources, so make bench-sppark links to it as it is.
touch build/libperfbot_cuda.so build/perfbot_cuda_selftest
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader > "$OUT/gpu.txt" 2>&1
JOBS=${JOBS:-16} ARGS=${ARGS:---sizes 20,22,24 --reps 7} bench/sppark.sh run "$OUT"

#!/usr/bin/env bash
# cuda-variants.sh OUTDIR NAME=FLAGS... — on the GPU machine: builds the CUDA
# library once per compile-time variant (extra nvcc flags; NAME=, with no
# flags, is the default build), all at once, then times each one's NTT
# (perfbot_cuda_selftest bench 24 ntt) in turn, twice, interleaved, so that a
# drift of the machine shows. Writes OUTDIR/variants.txt (one line per run:
# the variant and its NTT rows) and each build's log.
#
#   bench/cuda-variants.sh build/var base= lean=-DPB_NTT_LEAN=1 call=-DPB_FR_CALL=1
set -uo pipefail
out=${1:?usage: cuda-variants.sh OUTDIR NAME=FLAGS...}
shift
[ $# -gt 0 ] || { echo "cuda-variants.sh: no variants given (NAME=FLAGS ...)"; exit 2; }
mkdir -p "$out"
cd "$(dirname "$0")/.."
flags="-O3 -std=c++17 -arch=${CUDA_ARCH:-sm_90} -lineinfo"
names=()
pids=()
for v in "$@"; do
  name=${v%%=*}
  extra=${v#*=}
  case $name in '' | *[!a-zA-Z0-9_-]*) echo "cuda-variants.sh: bad variant name in '$v'"; exit 2 ;; esac
  names+=("$name")
  make -j2 cuda BUILD="build/var-$name" NVFLAGS="$flags -Xptxas -v $extra" > "$out/build-$name.log" 2>&1 &
  pids+=($!)
done
t0=$(date +%s)
for i in "${!pids[@]}"; do
  wait "${pids[$i]}" || { tail -20 "$out/build-${names[$i]}.log"; echo "cuda-variants.sh: ${names[$i]} failed to build"; exit 1; }
done
echo "builds: $(( $(date +%s) - t0 )) s"
for round in 1 2; do
  for name in "${names[@]}"; do
    build/var-$name/perfbot_cuda_selftest bench 24 ntt 2>&1 | grep -E "^ntt_device" | sed "s/^/$name round $round: /" |
      tee -a "$out/variants.txt"
  done
done

#!/usr/bin/env bash
# cuda-variants.sh OUTDIR NAME=FLAGS... — on the GPU machine: builds the CUDA
# library once per compile-time variant (extra nvcc flags; NAME=, with no
# flags, is the default build), all at once, then times each one in turn,
# twice, interleaved, so that a drift of the machine shows. BENCH is what
# perfbot_cuda_selftest bench times: "24 ntt" (default) the NTT and quotient
# up to 2^24, "24" the MSM and transfers too. Writes OUTDIR/variants.txt
# (one line per timing row: the variant, the round, the row) and each
# build's log.
#
#   bench/cuda-variants.sh build/var base= noptx=-DPB_NO_PTX_FR
#   bench/cuda-variants.sh build/var v6= v5b="-DPB_MONT_PLAIN -DPB_NO_PTX_CHAINS"
#   BENCH=24 bench/cuda-variants.sh build/var base= noptx=-DPB_NO_PTX_FR
set -uo pipefail
out=${1:?usage: cuda-variants.sh OUTDIR NAME=FLAGS...}
shift
[ $# -gt 0 ] || { echo "cuda-variants.sh: no variants given (NAME=FLAGS ...)"; exit 2; }
mkdir -p "$out"
cd "$(dirname "$0")/.."
flags="-O3 -std=c++17 -arch=${CUDA_ARCH:-sm_90} -lineinfo"
# -DPB_MONT_PLAIN (field.cuh) needs the generator's --plain products.
mkdir -p build/mont-plain
python3 cuda/gen/mont_ptx.py --plain > build/mont-plain/mont_ptx_plain.cuh 2> /dev/null ||
  { echo "cuda-variants.sh: cuda/gen/mont_ptx.py --plain failed"; exit 1; }
flags="$flags -I$PWD/build/mont-plain"
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
    build/var-$name/perfbot_cuda_selftest bench ${BENCH:-24 ntt} 2>&1 | grep -E "^(msm|ntt|quotient)" |
      sed "s/^/$name round $round: /" |
      tee -a "$out/variants.txt"
  done
done

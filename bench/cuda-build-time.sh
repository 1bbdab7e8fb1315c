#!/usr/bin/env bash
# bench/cuda-build-time.sh OUT [ONE_UNIT_TREE] — how long a clean build of
# the CUDA library takes on this host (a comparison builds it for each
# revision it measures): make -j$(nproc) cuda-lib from nothing, its four
# translation units side by side, each unit's own compile time from
# make's log; then, given ONE_UNIT_TREE (a tree whose cuda/perfbot_cuda.cu
# is the whole library, as before the split, e.g. `git archive 326d03d
# cuda | tar -x -C DIR`), the same library as that one unit, for the
# before-and-after on the same card. One line each to OUT/build-time.txt.
set -uo pipefail
out=${1:?usage: bench/cuda-build-time.sh OUT [ONE_UNIT_TREE]}
one=${2:-}
mkdir -p "$out"
top=$(cd "$(dirname "$0")/.." && pwd)
nvcc=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
flags="-O3 -std=c++17 -arch=${CUDA_ARCH:-sm_90} -lineinfo"
jobs=$(nproc)
{ echo "host: $jobs CPUs; $("$nvcc" --version | tail -2 | head -1)"; nvidia-smi -L 2>/dev/null; } >> "$out/build-time.txt"
split=$(mktemp -d)
if [ "${SPLIT:-1}" != 0 ]; then
start=$(date +%s.%N)
# Each unit timed by a wrapper around nvcc (make -j runs them at once).
cat > "$split/nvcc" <<W
#!/usr/bin/env bash
s=\$(date +%s.%N)
"$nvcc" "\$@"; rc=\$?
e=\$(date +%s.%N)
last=link; for a in "\$@"; do case \$a in *.cu) last=\$a;; esac; done
echo "unit \${last##*/} \$(python3 -c "print(f'{\$e-\$s:.1f}')") s (exit \$rc)" >> "$split/units.txt"
exit \$rc
W
chmod +x "$split/nvcc"
rm -rf "$top/build/cuda-obj" "$top/build/libperfbot_cuda.so" # from nothing, and kept for make gpu-check
make -C "$top" -j"$jobs" cuda-lib NVCC="$split/nvcc" NVFLAGS="$flags" > "$out/build-split.log" 2>&1
code=$?
end=$(date +%s.%N)
python3 -c "print(f'split, make -j$jobs cuda-lib: exit $code, {$end - $start:.1f} s')" >> "$out/build-time.txt"
sed 's/^/  /' "$split/units.txt" >> "$out/build-time.txt" 2>/dev/null
tail -1 "$out/build-time.txt"
fi
if [ -n "$one" ]; then
	start=$(date +%s.%N)
	"$nvcc" $flags -shared -Xcompiler -fPIC -o "$split/one.so" "$one/cuda/perfbot_cuda.cu" > "$out/build-one.log" 2>&1
	code=$?
	end=$(date +%s.%N)
	python3 -c "print(f'one unit ($one): exit $code, {$end - $start:.1f} s')" >> "$out/build-time.txt"
	tail -1 "$out/build-time.txt"
fi
rm -rf "$split"

#!/usr/bin/env bash
# sppark.sh pack | run OUTDIR — our G1 MSM and Fr NTT timed beside sppark's
# (supranational/sppark) in one process, on the same inputs, every result
# compared (build/perfbot_sppark_bench, bench/sppark/): where BENCHMARKS.md's
# "× sppark" ratios come from. Two steps, since the GPU machine has no
# network:
#
#   bench/sppark.sh pack
#       here, where the git mirrors are: writes build/sppark-src.tar.gz
#       (under 1 MB) holding sppark-src/, sppark's tree at SPPARK_REV
#       (default HEAD) of SPPARK_GIT (default the local mirror) with that
#       commit in sppark-src/COMMIT, and sppark-src/blst/, blst's src/ and
#       build/ at BLST_REV of BLST_GIT with its commit in blst/COMMIT: on
#       the host, sppark's BLS12-381 field types are blst's, so its half
#       of the benchmark needs blst's headers and library.
#
#   bench/sppark.sh run OUTDIR
#       on the GPU machine, in the repository's root, with
#       build/sppark-src.tar.gz carried there: unpacks it under build/,
#       builds (make bench-sppark; libperfbot_cuda.so too when it is not
#       built), runs the benchmark and writes OUTDIR/sppark-side-by-side.txt
#       (date, GPU, the commits, then the benchmark's output) and
#       OUTDIR/sppark-build.log. ARGS adds the benchmark's flags, e.g.
#       ARGS="--sizes 20,22,24 --reps 7 --seed 1" (its defaults: those
#       sizes, 7 rounds, a drawn seed). Exits non-zero when the build fails
#       or the benchmark does: 1 on a mismatch between the libraries or
#       with the host's reference, 2 on an error.
#
# With the device tool: command `bench/sppark.sh run $OUT`, carry
# ["build/sppark-src.tar.gz"]; the result is $OUT/sppark-side-by-side.txt.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
tarball=$repo/build/sppark-src.tar.gz

pack() {
  local sppark_git=${SPPARK_GIT:-/work/.mirror/supranational+sppark/repo}
  local blst_git=${BLST_GIT:-/work/.mirror/supranational+blst/repo}
  local sppark_rev blst_rev size
  sppark_rev=$(git -C "$sppark_git" rev-parse --verify "${SPPARK_REV:-HEAD}^{commit}" 2>/dev/null) ||
    { echo "sppark.sh pack: no commit ${SPPARK_REV:-HEAD} in SPPARK_GIT=$sppark_git (a git dir of supranational/sppark)"; exit 1; }
  blst_rev=$(git -C "$blst_git" rev-parse --verify "${BLST_REV:-HEAD}^{commit}" 2>/dev/null) ||
    { echo "sppark.sh pack: no commit ${BLST_REV:-HEAD} in BLST_GIT=$blst_git (a git dir of supranational/blst)"; exit 1; }
  tmp=$(mktemp -d) # global: the EXIT trap runs after pack returns
  trap 'rm -rf "$tmp"' EXIT
  mkdir -p "$tmp/sppark-src"
  git -C "$sppark_git" archive --format=tar "$sppark_rev" | tar -x -C "$tmp/sppark-src" ||
    { echo "sppark.sh pack: git archive of sppark failed"; exit 1; }
  [ ! -e "$tmp/sppark-src/blst" ] || { echo "sppark.sh pack: sppark's tree has its own blst/; cannot put blst's there"; exit 1; }
  mkdir -p "$tmp/sppark-src/blst"
  git -C "$blst_git" archive --format=tar "$blst_rev" src build LICENSE | tar -x -C "$tmp/sppark-src/blst" ||
    { echo "sppark.sh pack: git archive of blst failed"; exit 1; }
  echo "$sppark_rev" > "$tmp/sppark-src/COMMIT"
  echo "$blst_rev" > "$tmp/sppark-src/blst/COMMIT"
  mkdir -p "$repo/build"
  tar -C "$tmp" -czf "$tarball" sppark-src || { echo "sppark.sh pack: tar failed"; exit 1; }
  size=$(stat -c %s "$tarball")
  # The device tool carries at most 64 MiB in all; this should be ~0.6 MB.
  if [ "$size" -gt $((16 << 20)) ]; then
    echo "sppark.sh pack: $tarball is $size bytes, too large to carry beside the rest"; exit 1
  fi
  echo "wrote $tarball ($size bytes): sppark $sppark_rev, blst $blst_rev"
}

run() {
  local out=${1:?usage: bench/sppark.sh run OUTDIR}
  mkdir -p "$out" && out=$(cd "$out" && pwd) || { echo "sppark.sh run: cannot make $out"; exit 1; }
  cd "$repo" || exit 1
  [ -f "$tarball" ] || { echo "sppark.sh run: no $tarball: run bench/sppark.sh pack where the mirrors are and carry it"; exit 1; }
  # A fresh tree and a fresh build of sppark's half every time: tar keeps
  # the archive's file times (the commit's), so make could not tell a
  # newly packed sppark from the one built last time.
  rm -rf build/sppark-src build/sppark
  tar -xzf "$tarball" -C build || { echo "sppark.sh run: cannot unpack $tarball"; exit 1; }
  local t0=$(date +%s)
  if ! make -j"${JOBS:-4}" bench-sppark SPPARK="$repo/build/sppark-src" > "$out/sppark-build.log" 2>&1; then
    tail -40 "$out/sppark-build.log"; echo "sppark.sh run: build failed (log: $out/sppark-build.log)"; exit 1
  fi
  echo "build: $(( $(date +%s) - t0 )) s"
  local res=$out/sppark-side-by-side.txt perfbot_rev
  perfbot_rev=$(git rev-parse HEAD 2>/dev/null || echo unknown)
  [ "$perfbot_rev" = unknown ] || git diff --quiet HEAD 2>/dev/null || perfbot_rev="$perfbot_rev (with uncommitted changes)"
  # "#" lines: benchfmt ignores them, so a differing date does not split
  # benchstat's tables; the benchmark prints its own gpu: and sppark: keys.
  {
    echo "# date $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "# nvidia-smi $(nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader 2>&1 | head -1)"
    echo "# sppark $(cat build/sppark-src/COMMIT) (supranational/sppark)"
    echo "# blst $(cat build/sppark-src/blst/COMMIT) (supranational/blst)"
    echo "# perfbot $perfbot_rev"
    echo "# nvcc $("$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)" --version 2>/dev/null | grep -o 'release [0-9.]*' || echo unknown)"
    echo "# args ${ARGS:-}"
  } > "$res"
  cat "$res"
  # shellcheck disable=SC2086 # ARGS is flags, split on purpose
  build/perfbot_sppark_bench ${ARGS:-} 2>&1 | tee -a "$res"
  local status=${PIPESTATUS[0]}
  [ "$status" -eq 0 ] || echo "sppark.sh run: perfbot_sppark_bench exited $status (1: results differ, 2: error)" | tee -a "$res"
  exit "$status"
}

case ${1:-} in
  pack) pack ;;
  run) shift; run "$@" ;;
  *) echo "usage: bench/sppark.sh pack | run OUTDIR (see the comment at the top)"; exit 2 ;;
esac

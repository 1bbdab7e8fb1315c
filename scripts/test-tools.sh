#!/usr/bin/env bash
# test-tools.sh [--check]
#
# The tools make test needs beside Go, in one list that make test and
# .ci/run both use, so the two cannot drift. Each tool is checked; the
# Debian packages of those missing are installed with apt-get when this
# runs as root (or with sudo that needs no password), then checked again.
# With --check, or PERFBOT_INSTALL=0, nothing is installed: the missing
# tools are named with the one command that installs them. Exit 0 when
# every tool is there, 1 when one is missing (after installing, if tried),
# 2 for bad usage.
#
#   tool              package               used by
#   initdb, pg_ctl    postgresql            the store suite (scripts/with-postgres.sh)
#   valgrind          valgrind              the callgrind tests
#   chromium          chromium              the dashboard's headless-browser test
#   systemd-analyze   systemd               the runner kit's unit check (deploy/systemd)
#   benchmark.h       libbenchmark-dev      the Google Benchmark reader's real-tool test
#   hyperfine         hyperfine             the hyperfine reader's real-tool test
#   criterion crate   librust-criterion-dev the criterion reader's real-tool test (offline)
#   cargo, rustc      cargo                 the criterion and libtest readers' tests
#   g++, python3      g++, python3          make cuda-host-check
#
# PERFBOT_TOOLS_ROOT (default empty) is prefixed to the file paths checked
# (the PostgreSQL server, the Google Benchmark header, the criterion
# crate): the script's own test points it at an empty tree to see the
# install path run; nothing else needs it.
set -euo pipefail

check_only=0
case "${1:-}" in
  "") ;;
  --check) check_only=1 ;;
  *) echo "usage: $0 [--check]" >&2; exit 2 ;;
esac
[ "${PERFBOT_INSTALL:-1}" = 0 ] && check_only=1
root=${PERFBOT_TOOLS_ROOT:-}

have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_glob() { compgen -G "$root$1" >/dev/null; }

# missing prints the Debian package of each tool that is not here.
missing() {
  { have_glob '/usr/lib/postgresql/*/bin/initdb' || { have_cmd initdb && have_cmd pg_ctl; }; } || echo postgresql
  have_cmd valgrind || echo valgrind
  have_cmd chromium || echo chromium
  have_cmd systemd-analyze || echo systemd
  have_glob /usr/include/benchmark/benchmark.h || echo libbenchmark-dev
  have_cmd hyperfine || echo hyperfine
  have_glob '/usr/share/cargo/registry/criterion-0.3.*' || echo librust-criterion-dev
  # rustup's cargo in ~/.cargo/bin counts (the readers' tests look there).
  { have_cmd cargo || [ -x "${HOME:-/nonexistent}/.cargo/bin/cargo" ]; } || echo cargo
  have_cmd g++ || echo g++
  have_cmd python3 || echo python3
}

if ! have_cmd go; then
  echo "test-tools: no go in PATH: make test needs Go 1.26 (the module proxy fetches the rest); install it from go.dev/dl and put its bin/ in PATH" >&2
  exit 1
fi

need=$(missing | tr '\n' ' ' | sed 's/ $//')
if [ -z "$need" ]; then
  echo "test-tools: every tool make test needs is here"
  exit 0
fi

install="apt-get install -y --no-install-recommends $need"
sudo=""
if [ "$(id -u)" -ne 0 ]; then
  if have_cmd sudo && sudo -n true 2>/dev/null; then sudo="sudo "; else check_only=1; fi
fi
if [ "$check_only" = 1 ] || ! have_cmd apt-get; then
  echo "test-tools: make test needs these Debian packages, which are missing: $need" >&2
  if [ "$(id -u)" -ne 0 ]; then
    echo "install them with: sudo apt-get update && sudo $install" >&2
  else
    echo "install them with: apt-get update && $install" >&2
  fi
  exit 1
fi

echo "test-tools: installing $need"
export DEBIAN_FRONTEND=noninteractive
${sudo}apt-get update -qq
${sudo}apt-get install -y -qq --no-install-recommends $need >/dev/null

still=$(missing | tr '\n' ' ' | sed 's/ $//')
if [ -n "$still" ]; then
  echo "test-tools: apt-get installed $need, yet these are still missing: $still; install them by hand ($install)" >&2
  exit 1
fi
echo "test-tools: installed $need"

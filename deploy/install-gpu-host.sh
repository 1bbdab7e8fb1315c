#!/usr/bin/env bash
# install-gpu-host.sh — put perfbot on a GPU host (docs/gpu-runner.md).
#
# Run from a checkout of perfbot, as root for a real install:
#
#   sudo deploy/install-gpu-host.sh            # binary, CUDA library, config skeleton, units
#   sudo systemctl enable --now perfbot-worker@0 perfbot-worker@1 …   # one per GPU
#
# It checks the Go toolchain against go.mod, builds perfbot and (unless
# --no-cuda) the CUDA library with `make cuda`, installs both in
# $PREFIX/lib/perfbot/ (perfbot finds the library next to its binary) with
# $PREFIX/bin/perfbot linking to the binary, writes a config skeleton to
# $ETC only where no file is there yet, installs the systemd units with
# ExecStart pointing at $PREFIX/bin/perfbot, and checks them with
# systemd-analyze verify. Running it again upgrades the binary and the units
# and leaves an edited config alone.
#
# Options (the tests use them to install under a temporary directory):
#   --prefix DIR     default /usr/local
#   --etc DIR        default /etc/perfbot
#   --units DIR      default /etc/systemd/system
#   --no-cuda        skip make cuda (a host without nvcc; `prove --backend gpu` will not work)
#   --no-user        do not create the perfbot system user
#   --no-reload      do not run systemctl daemon-reload
set -euo pipefail

prefix=/usr/local etc=/etc/perfbot units=/etc/systemd/system
cuda=1 user=1 reload=1
while [ $# -gt 0 ]; do
  case "$1" in
    --prefix) prefix=$2; shift 2 ;;
    --etc) etc=$2; shift 2 ;;
    --units) units=$2; shift 2 ;;
    --no-cuda) cuda=0; shift ;;
    --no-user) user=0; shift ;;
    --no-reload) reload=0; shift ;;
    -h|--help) sed -n '2,25p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "install-gpu-host.sh: unknown option $1 (see --help)" >&2; exit 2 ;;
  esac
done

die() { echo "install-gpu-host.sh: $*" >&2; exit 1; }
src=$(cd "$(dirname "$0")/.." && pwd)
[ -f "$src/go.mod" ] && [ -d "$src/cmd/perfbot" ] || die "run me from a perfbot checkout ($src has no go.mod and cmd/perfbot)"

# The Go toolchain: go.mod's go line is the oldest that builds perfbot.
command -v go >/dev/null || die "no go on PATH: install Go $(sed -n 's/^go //p' "$src/go.mod") or newer (https://go.dev/dl/) and run me again"
need=$(sed -n 's/^go //p' "$src/go.mod")
have=$(go env GOVERSION | sed 's/^go//')
older() { # is version $1 older than $2?
  [ "$1" != "$2" ] && [ "$(printf '%s\n%s\n' "$1" "$2" | sort -V | head -1)" = "$1" ]
}
if older "$have" "$need"; then
  die "go $have is older than go.mod's $need: install Go $need or newer (https://go.dev/dl/), or set GOTOOLCHAIN=go$need to let go fetch it"
fi

cd "$src"
echo "building perfbot with go $have"
mkdir -p build
go build -o build/perfbot ./cmd/perfbot
if [ "$cuda" = 1 ]; then
  command -v make >/dev/null || die "no make on PATH: install make (apt-get install make): the CUDA library and the GPU config's build step (make cuda-lib) use it, or run with --no-cuda for a host that only serves"
  nvcc=$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)
  [ -x "$nvcc" ] || die "no nvcc on PATH or in /usr/local/cuda/bin: install the CUDA toolkit, or run with --no-cuda for a host that only serves"
  echo "building the CUDA library (make cuda; CUDA_ARCH=${CUDA_ARCH:-sm_90})"
  make cuda NVCC="$nvcc"
fi

lib="$prefix/lib/perfbot"
install -d "$lib" "$prefix/bin"
install -m 0755 build/perfbot "$lib/perfbot.new" && mv -f "$lib/perfbot.new" "$lib/perfbot"
if [ "$cuda" = 1 ]; then
  install -m 0644 build/libperfbot_cuda.so "$lib/libperfbot_cuda.so.new" && mv -f "$lib/libperfbot_cuda.so.new" "$lib/libperfbot_cuda.so"
fi
ln -sfn "$lib/perfbot" "$prefix/bin/perfbot"
echo "installed $prefix/bin/perfbot -> $lib/perfbot"

if [ "$user" = 1 ] && ! id perfbot >/dev/null 2>&1; then
  useradd --system --home-dir /var/lib/perfbot --shell /usr/sbin/nologin perfbot
  echo "created the perfbot system user"
fi

# The config skeleton: written once, never over an edited file.
install -d -m 0755 "$etc"
if [ ! -e "$etc/perfbot.env" ]; then
  (umask 077; cat > "$etc/perfbot.env" <<'EOF'
# perfbot serve and perfbot worker read this (systemd EnvironmentFile).
# Readable by root only: it holds secrets.
GITHUB_TOKEN=
PERFBOT_WEBHOOK_SECRET=
PERFBOT_DB=postgres://perfbot@localhost/perfbot?sslmode=disable
EOF
  )
  echo "wrote $etc/perfbot.env (fill in GITHUB_TOKEN, PERFBOT_WEBHOOK_SECRET, PERFBOT_DB)"
fi
if [ ! -e "$etc/perfbot-server.yml" ]; then
  install -m 0644 docs/perfbot-server.example.yml "$etc/perfbot-server.yml"
  echo "wrote $etc/perfbot-server.yml (from docs/perfbot-server.example.yml: name your repositories)"
fi

# The worker's build steps find go, make and nvcc where this script did:
# systemd's default PATH has neither /usr/local/go/bin nor
# /usr/local/cuda/bin.
toolpath=$(dirname "$(command -v go)")
if [ "$cuda" = 1 ]; then toolpath="$toolpath:$(dirname "$nvcc")"; fi
toolpath="$toolpath:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

install -d "$units"
for unit in perfbot-serve.service perfbot-worker@.service; do
  sed "s|/usr/local/bin/perfbot|$prefix/bin/perfbot|g; s|/etc/perfbot/|$etc/|g; s|^Environment=PATH=.*|Environment=PATH=$toolpath|" \
    "deploy/systemd/$unit" > "$units/$unit.new"
  chmod 0644 "$units/$unit.new"
  mv -f "$units/$unit.new" "$units/$unit"
done
echo "installed the units in $units"
if command -v systemd-analyze >/dev/null; then
  out=$(systemd-analyze verify "$units/perfbot-serve.service" "$units/perfbot-worker@0.service" 2>&1) ||
    die "systemd-analyze verify failed: $out"
  [ -z "$out" ] || die "systemd-analyze verify warns: $out"
fi
if [ "$reload" = 1 ] && command -v systemctl >/dev/null; then
  systemctl daemon-reload
fi

"$prefix/bin/perfbot" version
gpus=0
if command -v nvidia-smi >/dev/null; then
  gpus=$(nvidia-smi -L | grep -c '^GPU ' || true)
fi
echo
echo "next: fill in $etc/perfbot.env, then"
echo "  systemctl enable --now perfbot-serve            # on the one host that takes webhooks"
if [ "$gpus" -gt 0 ]; then
  echo "  systemctl enable --now $(seq -f 'perfbot-worker@%g' 0 $((gpus - 1)) | tr '\n' ' ')  # one worker per GPU ($gpus here)"
else
  echo "  systemctl enable --now perfbot-worker@0 …       # one worker per GPU"
fi
echo "and read what '$prefix/bin/perfbot system' says about this host's noise (docs/gpu-runner.md)."

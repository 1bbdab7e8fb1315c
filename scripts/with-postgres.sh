#!/usr/bin/env bash
# with-postgres.sh CMD [ARG...]
#
# Runs CMD with PERFBOT_TEST_DATABASE_URL pointing at a PostgreSQL server.
# When the variable is already set, CMD runs as is. Otherwise the script
# creates a throwaway cluster (trust auth, Unix socket only, no fsync) in a
# temporary directory, runs CMD against its database perfbot_test, then
# stops the cluster and deletes the directory, whether CMD succeeds, fails
# or is interrupted. CMD's exit status is the script's.
#
#   scripts/with-postgres.sh go test ./store/...
#
# Server binaries: PERFBOT_PG_BINDIR when set (a relocatable build, as
# bench/gpu-bot-flow.sh carries to the GPU host), else the newest
# /usr/lib/postgresql/*/bin, else pg_config --bindir, else initdb on PATH.
# Without createdb there, CMD gets the cluster's own database, postgres.
# PostgreSQL refuses to run as root, so as root the cluster runs as the
# postgres user.
set -euo pipefail

if [ $# -eq 0 ]; then
	echo "usage: $0 CMD [ARG...]" >&2
	exit 2
fi
if [ -n "${PERFBOT_TEST_DATABASE_URL:-}" ]; then
	exec "$@"
fi

die() {
	echo "with-postgres: $*" >&2
	exit 1
}

bindir=""
if [ -n "${PERFBOT_PG_BINDIR:-}" ]; then
	[ -x "$PERFBOT_PG_BINDIR/initdb" ] && [ -x "$PERFBOT_PG_BINDIR/pg_ctl" ] ||
		die "PERFBOT_PG_BINDIR=$PERFBOT_PG_BINDIR has no initdb and pg_ctl: point it at a PostgreSQL server's bin directory"
	bindir=$PERFBOT_PG_BINDIR
fi
[ -n "$bindir" ] || for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k5,5 -V -r); do
	if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
		bindir=$d
		break
	fi
done
if [ -z "$bindir" ] && command -v pg_config >/dev/null 2>&1; then
	d=$(pg_config --bindir)
	if [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then bindir=$d; fi
fi
if [ -z "$bindir" ] && command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
	bindir=$(dirname "$(command -v initdb)")
fi
[ -n "$bindir" ] || die "no PostgreSQL server binaries (initdb, pg_ctl) found; install them with: apt-get install postgresql (or set PERFBOT_TEST_DATABASE_URL)"

# as_owner runs a command as the cluster's owner: the postgres user when
# we are root, ourselves otherwise.
if [ "$(id -u)" -eq 0 ]; then
	id postgres >/dev/null 2>&1 || die "running as root and there is no postgres user to run the server as (apt-get install postgresql creates it)"
	if command -v runuser >/dev/null 2>&1; then
		as_owner() { runuser -u postgres -- "$@"; }
	else
		as_owner() { su postgres -s /bin/bash -c "$(printf '%q ' "$@")"; }
	fi
	# The socket path must stay short (about 100 bytes), and the postgres
	# user must reach the directory: use /tmp.
	base=/tmp
else
	as_owner() { "$@"; }
	base=${TMPDIR:-/tmp}
	if [ ${#base} -gt 60 ]; then base=/tmp; fi
fi

dir=$(mktemp -d "$base/perfbot-pg.XXXXXX")
started=0
cleanup() {
	local rc=$?
	if [ "$started" = 1 ]; then
		as_owner "$bindir/pg_ctl" -D "$dir/data" -m immediate -w stop >>"$dir/pg_ctl.log" 2>&1 ||
			echo "with-postgres: could not stop the server in $dir/data" >&2
	fi
	rm -rf "$dir"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

show_logs() {
	local f
	for f in "$dir"/*.log; do
		[ -s "$f" ] || continue
		echo "--- $(basename "$f")" >&2
		tail -n 50 "$f" >&2
	done
}

if [ "$(id -u)" -eq 0 ]; then chown postgres: "$dir"; fi
chmod 700 "$dir"
# Logs live in the directory, so the owner can write them.
as_owner touch "$dir/initdb.log" "$dir/pg_ctl.log" "$dir/server.log"

if ! as_owner "$bindir/initdb" -D "$dir/data" -U postgres -A trust -E UTF8 --locale=C --no-sync >>"$dir/initdb.log" 2>&1; then
	show_logs
	die "initdb failed"
fi

# Unix socket only: no port to collide with another server. A throwaway
# cluster needs no durability.
if ! as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
	-o "-c listen_addresses='' -k $dir -c fsync=off -c synchronous_commit=off -c full_page_writes=off -c max_connections=200" \
	start >>"$dir/pg_ctl.log" 2>&1; then
	show_logs
	die "the PostgreSQL server did not start"
fi
started=1

database=postgres
if [ -x "$bindir/createdb" ]; then
	if ! as_owner "$bindir/createdb" -h "$dir" -U postgres perfbot_test >>"$dir/pg_ctl.log" 2>&1; then
		show_logs
		die "createdb perfbot_test failed"
	fi
	database=perfbot_test
fi

export PERFBOT_TEST_DATABASE_URL="postgres:///$database?host=$dir&user=postgres&sslmode=disable"
set +e
"$@"
rc=$?
set -e
# The tests drop their databases WITH (FORCE), which ends any connection
# still open with "terminating connection due to administrator command":
# expected, and left out so that a real server error stands out.
if [ "$rc" -ne 0 ]; then
	errors=$(grep -E 'FATAL|PANIC' "$dir/server.log" |
		grep -v 'terminating connection due to administrator command' | tail -n 20 || true)
	if [ -n "$errors" ]; then
		echo "with-postgres: the server logged errors while '$*' ran:" >&2
		printf '%s\n' "$errors" >&2
	fi
fi
exit "$rc"

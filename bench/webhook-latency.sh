#!/usr/bin/env bash
# webhook-latency.sh [ROUNDS]
#
# Issue 45: perfbot serve's webhook answer time at 8 deliveries at once
# with 30,000 jobs in river_job, the code before the sized connection
# pool (OLD) alternated with the code at NEW, ROUNDS rounds (default 6),
# against one throwaway PostgreSQL server (scripts/with-postgres.sh).
# Each run is BenchmarkWebhookDeliveryRealQueue (server/bench_test.go)
# with DELIVERIES deliveries (default 1,000); a round runs both codes,
# the first of them alternating from round to round. One line per run is
# appended to bench/results/webhook-latency.txt (OUT):
#
#   DATE MACHINE CODE REV rows=R p50=… p99=… max=… new-conns/1000=… pool-waits/1000=… load1=… beside=…
#
# rows is river_job's count after the run (the 30,000 preloaded, or
# PERFBOT_BENCH_QUEUE_ROWS, and each run's own jobs); new-conns/1000 the
# PostgreSQL connections the server's pool opened per 1,000 deliveries.
# Both test binaries are built in git worktrees of the two revisions
# (under a temporary directory, removed at the end) with NEW's
# server/bench_test.go in both, so that both run the same benchmark; it
# counts connections with database/sql's statistics, which OLD has too.
#
#   MACHINE=dev-2c BESIDE='make test' bench/webhook-latency.sh 8
#
# OLD defaults to 12ca49d, the last commit before the pool; NEW to HEAD.
# BESIDE is a note of what else ran on the machine meanwhile (default
# "nothing"); the script starts nothing beside itself.
set -euo pipefail

root=$(git rev-parse --show-toplevel)

if [ "${1:-}" = "--measure" ]; then
	# Under with-postgres.sh: the rounds, against one server.
	shift
	tmp=$1 rounds=$2
	for ((r = 1; r <= rounds; r++)); do
		order="old new"
		if ((r % 2 == 0)); then order="new old"; fi
		for code in $order; do
			rev=$(cat "$tmp/$code.rev")
			load1=$(cut -d' ' -f1 /proc/loadavg)
			line=$(cd "$tmp/$code/server" && PERFBOT_BENCH_QUEUE_ROWS=$ROWS "$tmp/$code.test" \
				-test.run '^$' -test.bench '^BenchmarkWebhookDeliveryRealQueue$' \
				-test.benchtime "${DELIVERIES}x" -test.count 1 2>&1 | grep '^BenchmarkWebhookDeliveryRealQueue' || true)
			if [ -z "$line" ]; then
				echo "webhook-latency: round $r, $code ($rev): the benchmark printed no result" >&2
				exit 1
			fi
			# Name, N, then value-unit pairs.
			out=$(echo "$line" | awk -v date="$(date -u +%Y-%m-%dT%H:%M:%SZ)" -v machine="$MACHINE" -v code="$code" \
				-v rev="$rev" -v load1="$load1" -v beside="$BESIDE" '{
				for (i = 3; i < NF; i += 2) v[$(i+1)] = $i
				printf "%s %s %s %s rows=%d p50=%.1fms p99=%.1fms max=%.0fms new-conns/1000=%.0f pool-waits/1000=%.0f load1=%s beside=%s\n",
					date, machine, code, rev, v["queue-rows"], v["p50-ms"], v["p99-ms"], v["max-ms"],
					v["new-conns/1000"], v["pool-waits/1000"], load1, beside
			}')
			echo "$out" | tee -a "$OUT"
		done
	done
	exit 0
fi

rounds=${1:-6}
old=$(git -C "$root" rev-parse --short "${OLD:-12ca49d}")
new=$(git -C "$root" rev-parse --short "${NEW:-HEAD}")
export MACHINE=${MACHINE:-$(hostname)}
export BESIDE=${BESIDE:-nothing}
export DELIVERIES=${DELIVERIES:-1000}
export ROWS=${PERFBOT_BENCH_QUEUE_ROWS:-30000}
export OUT=${OUT:-$root/bench/results/webhook-latency.txt}

tmp=$(mktemp -d /tmp/perfbot-webhook-latency.XXXXXX)
cleanup() {
	local rc=$?
	for code in old new; do
		if [ -d "$tmp/$code" ]; then git -C "$root" worktree remove --force "$tmp/$code" || true; fi
	done
	rm -rf "$tmp"
	exit "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

for code in old new; do
	rev=$old
	if [ "$code" = new ]; then rev=$new; fi
	echo "$rev" >"$tmp/$code.rev"
	git -C "$root" worktree add --detach "$tmp/$code" "$rev" >/dev/null 2>&1
	git -C "$root" show "$new:server/bench_test.go" >"$tmp/$code/server/bench_test.go"
	(cd "$tmp/$code" && go test -c -o "$tmp/$code.test" ./server)
done

echo "webhook-latency: $rounds rounds of $DELIVERIES deliveries, 8 at once, $ROWS jobs preloaded; old $old, new $new, on $MACHINE" >&2
"$root/scripts/with-postgres.sh" "$(realpath "$0")" --measure "$tmp" "$rounds"

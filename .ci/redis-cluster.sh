#!/usr/bin/env bash
# .ci/redis-cluster.sh: a throwaway Redis Cluster for a test run, from Debian's
# redis-server and redis-cli (.ci/redis.sh installs them), as
# mcpredis/redistest.StartCluster makes one for a Go test.
#
# Usage:
#   .ci/redis-cluster.sh start DIR [MASTERS [REPLICAS]]
#       starts MASTERS (default 3) masters, each with REPLICAS (default 0)
#       replicas, every node a redis-server on free loopback ports (its client
#       port and its cluster bus port, --cluster-port) keeping nothing on disk
#       but its cluster configuration, in DIR/node-N; joins them with
#       redis-cli --cluster create --cluster-yes; waits until every node
#       reports the cluster ok; prints the cluster's URL in go-redis's cluster
#       form (redis://host:port?addr=host:port&addr=...) on stdout. The nodes'
#       pids go to DIR/pids, their logs to DIR/node-N/redis.log.
#   .ci/redis-cluster.sh stop DIR
#       stops the nodes DIR/pids names (SIGTERM, then SIGKILL after 5 s).
#
# A start that fails stops what it started. Nothing else is touched.
set -euo pipefail

die() {
	echo "redis-cluster.sh: $*" >&2
	exit 1
}

find_bin() {
	local name=$1 b
	for b in "$(command -v "$name" 2>/dev/null || true)" "/usr/bin/$name" "/usr/sbin/$name"; do
		if [ -n "$b" ] && [ -x "$b" ]; then
			echo "$b"
			return 0
		fi
	done
	return 1
}

port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

# free_port: a loopback port nothing listens on, from the dynamic range the
# kernel does not hand out to outgoing connections by default (below 32768).
free_port() {
	local p i
	for i in $(seq 1 200); do
		p=$((20000 + RANDOM % 12000))
		if ! port_open "$p" && ! grep -qx "$p" "$USED" 2>/dev/null; then
			echo "$p" >>"$USED"
			echo "$p"
			return 0
		fi
	done
	die "no free port found"
}

# answer PORT CMD...: the first line of a node's answer.
answer() {
	local port=$1
	shift
	timeout 2 "$CLI" -h 127.0.0.1 -p "$port" "$@" 2>/dev/null </dev/null
}

stop() {
	local dir=$1 pid
	[ -f "$dir/pids" ] || return 0
	while read -r pid; do
		kill -TERM "$pid" 2>/dev/null || true
	done <"$dir/pids"
	for _ in $(seq 1 50); do
		local alive=0
		while read -r pid; do
			if kill -0 "$pid" 2>/dev/null; then alive=1; fi
		done <"$dir/pids"
		[ "$alive" = 1 ] || break
		sleep 0.1
	done
	while read -r pid; do
		kill -KILL "$pid" 2>/dev/null || true
	done <"$dir/pids"
	rm -f "$dir/pids"
}

start() {
	local dir=$1 masters=${2:-3} replicas=${3:-0}
	[ "$masters" -ge 3 ] || die "a Redis Cluster needs at least 3 masters"
	SERVER=$(find_bin redis-server) || die "no redis-server (.ci/redis.sh installs Debian's)"
	CLI=$(find_bin redis-cli) || die "no redis-cli (.ci/redis.sh installs Debian's)"
	mkdir -p "$dir"
	stop "$dir"
	USED=$dir/ports
	: >"$USED"
	trap 'stop "$dir"' ERR
	local n=$((masters * (1 + replicas))) i port bus nodes=() ports=()
	for i in $(seq 1 "$n"); do
		port=$(free_port)
		bus=$(free_port)
		mkdir -p "$dir/node-$i"
		rm -f "$dir/node-$i/nodes.conf"
		"$SERVER" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
			--dir "$dir/node-$i" --cluster-enabled yes --cluster-port "$bus" \
			--cluster-config-file nodes.conf --cluster-node-timeout 1000 \
			--repl-diskless-sync-delay 0 \
			</dev/null >>"$dir/node-$i/redis.log" 2>&1 &
		echo $! >>"$dir/pids"
		nodes+=("127.0.0.1:$port")
		ports+=("$port")
	done
	for port in "${ports[@]}"; do
		for _ in $(seq 1 100); do
			[ "$(answer "$port" ping)" = PONG ] && break
			sleep 0.05
		done
		[ "$(answer "$port" ping)" = PONG ] || die "node 127.0.0.1:$port did not start (logs in $dir)"
	done
	timeout 30 "$CLI" --cluster create "${nodes[@]}" --cluster-replicas "$replicas" --cluster-yes \
		</dev/null >"$dir/create.log" 2>&1 || {
		cat "$dir/create.log" >&2
		stop "$dir"
		die "redis-cli --cluster create failed"
	}
	for port in "${ports[@]}"; do
		for _ in $(seq 1 200); do
			answer "$port" cluster info | grep -q '^cluster_state:ok' && break
			sleep 0.05
		done
		answer "$port" cluster info | grep -q '^cluster_state:ok' || {
			stop "$dir"
			die "node 127.0.0.1:$port does not see the cluster ok"
		}
	done
	trap - ERR
	local url="redis://${nodes[0]}?" sep=""
	for i in "${nodes[@]:1}"; do
		url+="${sep}addr=$i"
		sep="&"
	done
	echo "$url"
}

case "${1:-}" in
start)
	[ "$#" -ge 2 ] || die "usage: $0 start DIR [MASTERS [REPLICAS]]"
	start "$2" "${3:-3}" "${4:-0}"
	;;
stop)
	[ "$#" -ge 2 ] || die "usage: $0 stop DIR"
	stop "$2"
	;;
*)
	die "usage: $0 start DIR [MASTERS [REPLICAS]] | stop DIR"
	;;
esac

#!/usr/bin/env bash
# Makes sure the Redis-backed tests have a redis-server binary: they start
# throwaway servers of their own (mcpredis/redistest), one per test, so no
# Redis needs to run beforehand. Installs Debian's redis-server package with
# apt-get when the binary is missing and this machine allows it (root, or
# sudo without a password); starts nothing. Quiet and quick when the binary
# is there.
#
# Without a binary, a Redis answering at $REDIS_URL (default
# 127.0.0.1:6379) is enough on a developer's machine: the tests that need a
# server of their own skip there. In CI (CI non-empty) they fail instead, so
# CI installs the binary all the same, and this script fails when it cannot.
# Otherwise it exits 0 and leaves it to the tests to skip.
set -euo pipefail

find_redis_server() {
  if command -v redis-server >/dev/null 2>&1; then command -v redis-server; return 0; fi
  for b in /usr/bin/redis-server /usr/sbin/redis-server; do
    if [ -x "$b" ]; then echo "$b"; return 0; fi
  done
  return 1
}

# redis_answers: a Redis at $REDIS_URL (or 127.0.0.1:6379) answers PING
# (or asks for a password, which is as good: something is there).
redis_answers() {
  local url="${REDIS_URL:-redis://127.0.0.1:6379}"
  if command -v redis-cli >/dev/null 2>&1; then
    local out
    out=$(timeout 1 redis-cli -u "$url" ping 2>/dev/null </dev/null) || return 1
    case "$out" in PONG|NOAUTH*) return 0 ;; esac
    return 1
  fi
  # redis://[user[:password]@]host[:port][/db]; rediss:// (TLS) cannot be
  # checked with /dev/tcp.
  case "$url" in redis://*) ;; *) return 1 ;; esac
  local hostport="${url#redis://}"
  hostport="${hostport##*@}"
  hostport="${hostport%%/*}"
  local host="${hostport%:*}" port="${hostport##*:}"
  [ "$host" != "$hostport" ] || port=6379
  host="${host#[}"; host="${host%]}"
  [ -n "$host" ] || host=127.0.0.1
  timeout 1 bash -c '
    exec 3<>"/dev/tcp/$1/$2" || exit 1
    printf "PING\r\n" >&3
    IFS= read -r line <&3 || exit 1
    case "$line" in "+PONG"*|"-NOAUTH"*) exit 0 ;; esac
    exit 1
  ' _ "$host" "$port" 2>/dev/null
}

if find_redis_server >/dev/null; then
  exit 0
fi

if [ -z "${CI:-}" ] && redis_answers; then
  echo "redis.sh: no redis-server binary, but a Redis answers at ${REDIS_URL:-redis://127.0.0.1:6379}; tests that need their own server will skip" >&2
  exit 0
fi

sudo=()
if [ "$(id -u)" != 0 ]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    sudo=(sudo -n)
  else
    sudo=(none)
  fi
fi

if [ "${sudo[*]}" != none ] && command -v apt-get >/dev/null 2>&1; then
  echo "redis.sh: installing Debian's redis-server (apt-get)" >&2
  install() {
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends redis-server >&2 </dev/null
  }
  if ! install; then
    echo "redis.sh: apt-get install failed; updating the package lists and trying again" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 </dev/null || true
    install || true
  fi
  if path=$(find_redis_server); then
    echo "redis.sh: installed $path (tests start their own servers; nothing started here)" >&2
    exit 0
  fi
  msg="redis.sh: no redis-server: apt-get could not install Debian's redis-server"
else
  msg="redis.sh: no redis-server, and this machine cannot install one (needs apt-get, and root or sudo without a password)"
fi

if [ -n "${CI:-}" ]; then
  echo "$msg; CI needs it" >&2
  exit 1
fi
echo "$msg; Redis-backed tests will skip" >&2

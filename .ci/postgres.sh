#!/usr/bin/env bash
# Makes sure the PostgreSQL-backed tests have a server to use: they take the
# machine's PostgreSQL ($DATABASE_URL, default postgres://postgres@127.0.0.1:5432/test)
# when it answers, and otherwise start a throwaway server of their own
# (example_app/database/dbtest) from Debian's postgresql binaries
# (initdb, postgres). Installs Debian's postgresql package with apt-get
# when those binaries are missing and this machine allows it (root, or
# sudo without a password); starts nothing. Quiet and quick when the
# binaries are there.
#
# In CI (CI non-empty) it fails when it cannot provide the binaries and no
# PostgreSQL answers; elsewhere it exits 0 and the tests skip.
set -euo pipefail

have_initdb() {
  command -v initdb >/dev/null 2>&1 && return 0
  compgen -G "/usr/lib/postgresql/*/bin/initdb" >/dev/null
}

pg_answers() {
  local hostport="127.0.0.1 5432"
  if [ -n "${DATABASE_URL:-}" ]; then
    local u="${DATABASE_URL#*://}"
    u="${u##*@}"
    u="${u%%/*}"
    u="${u%%\?*}"
    local host="${u%:*}" port="${u##*:}"
    [ "$host" != "$u" ] || port=5432
    hostport="$host $port"
  fi
  # shellcheck disable=SC2086
  timeout 1 bash -c 'exec 3<>"/dev/tcp/$1/$2"' _ $hostport 2>/dev/null
}

if have_initdb; then
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
  echo "postgres.sh: installing Debian's postgresql (apt-get)" >&2
  install() {
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive \
      apt-get install -y -qq --no-install-recommends postgresql >&2 </dev/null
  }
  if ! install; then
    echo "postgres.sh: apt-get install failed; updating the package lists and trying again" >&2
    "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 </dev/null || true
    install || true
  fi
  if have_initdb; then
    echo "postgres.sh: installed (tests start their own servers when none answers; nothing started here)" >&2
    exit 0
  fi
  msg="postgres.sh: apt-get could not install Debian's postgresql"
else
  msg="postgres.sh: no initdb, and this machine cannot install PostgreSQL (needs apt-get, and root or sudo without a password)"
fi

if pg_answers; then
  echo "$msg; a PostgreSQL answers, tests will use it" >&2
  exit 0
fi
if [ -n "${CI:-}" ]; then
  echo "$msg, and no PostgreSQL answers; CI needs one" >&2
  exit 1
fi
echo "$msg; PostgreSQL-backed tests will skip" >&2

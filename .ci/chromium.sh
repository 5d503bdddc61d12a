#!/usr/bin/env bash
# Makes sure a headless Chromium is installed for the browser test
# (interop/e2e): Debian's chromium package, installed with apt-get when it
# is missing and this machine allows it (root). Prints the binary's path.
# Exits 0 without a path when no Chromium can be had, so the caller decides
# whether that is fatal (it is in CI: see the Makefile).
set -euo pipefail

find_chromium() {
  for b in chromium chromium-browser google-chrome; do
    if command -v "$b" >/dev/null 2>&1; then command -v "$b"; return 0; fi
  done
  return 1
}

if path=$(find_chromium); then
  echo "$path"
  exit 0
fi
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium.sh: installing Debian's chromium (apt-get)" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends chromium >&2
  find_chromium
  exit 0
fi
echo "chromium.sh: no Chromium, and this machine cannot install one" >&2

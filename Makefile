# saguaro: every test behind one command (`make test`).
#
# The repository holds five Go modules: the core library (the root: no
# Redis client among its dependencies, so it builds with Go 1.25), mcpredis
# (the cluster on go-redis, which asks for Go 1.26, and its test helper
# mcpredis/redistest), example_app (the example app, the conformance
# fixture and the round-robin balancer; it imports mcpredis), and interop/
# and bench/ (the peer SDKs, kept out of the library's dependencies). A
# module that uses another replaces it with its folder in its go.mod, so
# every module builds on its own. The committed go.work only lets a
# developer run `go run ./example_app` from the root; make builds without
# it (GOWORK=off), so each module is tested as its users build it.
export GOWORK := off
GO      ?= go
PKGS    ?= ./...

# The oldest Go the core module supports (its go.mod's go line).
GO_FLOOR ?= go1.25.0

# The modules staticcheck reads: the library's, and interop's tests.
LINT_MODULES ?= . mcpredis example_app interop

# The public modules and the files under api/ that record their exported
# API (see internal/cmd/apicheck).
API_FILES ?= .=api/saguaro.txt mcpredis=api/mcpredis.txt

# The spec revisions whose requirement sets the conformance suite runs.
REVISIONS ?= 2025-11-25 2026-07-28

.PHONY: test fmt-check vet api api-check go-floor staticcheck redis postgres unit interop deploy-check tools conformance-authorization conformance conformance-alpha conformance-cluster conformance-alpha-cluster conformance-rediscluster conformance-alpha-rediscluster conformance-revisions conformance-revisions-cluster $(REVISIONS:%=conformance-%) $(REVISIONS:%=conformance-%-cluster) bench bench-cluster soak soak-short

# staticcheck comes last: a lint finding must not hide the tests' verdict.
test: fmt-check vet api-check go-floor unit interop deploy-check soak-short conformance-authorization conformance conformance-alpha conformance-cluster conformance-alpha-cluster conformance-rediscluster conformance-alpha-rediscluster conformance-revisions conformance-revisions-cluster staticcheck

fmt-check:
	@out=$$(gofmt -l $$(git ls-files '*.go' 2>/dev/null || find . -name '*.go')); \
	if [ -n "$$out" ]; then echo "gofmt would change:"; echo "$$out"; exit 1; fi

# go vet in each library module (interop and bench vet their own).
vet:
	$(GO) vet $(PKGS)
	cd mcpredis && $(GO) vet ./...
	cd example_app && $(GO) vet ./...

# The exported API of each public module, recorded in api/: `make api`
# writes the files; `make api-check` fails when the code's API differs
# from them, printing each difference as compatible or incompatible. A
# change to the API is made on purpose: record it with `make api`, commit
# api/, and add a line to CHANGELOG.md.
api:
	$(GO) run ./internal/cmd/apicheck -w $(API_FILES)

api-check:
	$(GO) run ./internal/cmd/apicheck $(API_FILES)

# The core module's floor, proved with that Go itself: the $(GO_FLOOR)
# toolchain (fetched once from the Go module proxy into the module cache)
# builds and vets every package of the core, tests included, and reads the
# same API from it as api/saguaro.txt records (the file does not depend on
# the Go that writes it). GOWORK=off: a go.work above the repository must
# not change what is proved.
go-floor:
	GOWORK=off GOTOOLCHAIN=$(GO_FLOOR) $(GO) version
	GOWORK=off GOTOOLCHAIN=$(GO_FLOOR) $(GO) build ./... && GOWORK=off GOTOOLCHAIN=$(GO_FLOOR) $(GO) vet ./...
	GOWORK=off GOTOOLCHAIN=$(GO_FLOOR) $(GO) run ./internal/cmd/apicheck .=api/saguaro.txt

# staticcheck over every package of $(LINT_MODULES), at the version pinned
# in .ci/staticcheck.sh, which installs it into .tools/ (go install with
# GOBIN). Every module is checked even when one has findings.
staticcheck:
	@sc="$$(.ci/staticcheck.sh)" || exit 1; rc=0; \
	for m in $(LINT_MODULES); do \
		echo "cd $$m && staticcheck ./..."; \
		(cd $$m && "$$sc" ./...) || rc=1; \
	done; exit $$rc

# A redis-server binary for the Redis-backed tests, which start throwaway
# servers of their own (mcpredis/redistest): .ci/redis.sh installs Debian's
# package where it is missing; quiet and instant where it is there.
redis:
	@.ci/redis.sh

# PostgreSQL for the example app's database tests (example_app/database/dbtest):
# the machine's when it answers, else throwaway servers from Debian's
# postgresql binaries, which .ci/postgres.sh installs where they are missing.
postgres:
	@.ci/postgres.sh

# mcpredis's suite runs twice: on one Redis, then with REDISTEST_CLUSTER=1,
# which gives each test a three-master Redis Cluster of its own
# (redistest.StartCluster), so that what works on one Redis is proved on a
# cluster too.
unit: redis postgres
	$(GO) test -race -count=1 $(PKGS)
	cd mcpredis && $(GO) test -race -count=1 ./...
	cd mcpredis && REDISTEST_CLUSTER=1 $(GO) test -race -count=1 .
	cd example_app && $(GO) test -race -count=1 ./...

# The peer SDKs' clients (go-sdk, mcp-go) against the conformance fixture:
# a module of its own, so the library never depends on them.
# Also the example app end to end (its real binary, the Go SDK client, and
# its dashboard in headless Chromium, which .ci/chromium.sh installs from
# Debian's packages where it is missing).
interop: redis postgres
	CHROMIUM="$$(.ci/chromium.sh)"; export CHROMIUM; \
	cd interop && $(GO) vet ./... && $(GO) test -race -count=1 ./... && \
	REDISTEST_CLUSTER=1 $(GO) test -race -count=1 -run '$(REPLICA_TESTS)' .

# The example app's replica tests, run a second time by `interop` with
# REDISTEST_CLUSTER=1: its three replicas then share their sessions on a
# three-master Redis Cluster of their own (mcpredis/redistest).
REPLICA_TESTS ?= ^(TestReplicasShareTheBoard|TestTypeScriptSDKOAuthReplicas|TestDashboardSignIn)$$

# What deploys the example app, checked without Docker or a cluster
# (neither runs here): the Kubernetes manifests in deploy/kubernetes
# validated by kubeconform -strict against the Kubernetes API's schemas
# (.ci/kubeconform.sh installs both from the Go module proxy, pinned),
# and example_app/Dockerfile's `go build` line, read from the file, run
# as the image's build runs it, its binary checked static. See
# .ci/deploy-check.sh.
deploy-check:
	GO=$(GO) .ci/deploy-check.sh

# The official suite's `authorization` command (0.2.0-alpha.12: the
# authorization-server-metadata-endpoint and authorization-code-grant
# scenarios) against the example app's own authorization server
# (example_app/oauth), with development approval standing in for a person;
# 0 failed checks and 0 warnings, or it fails.
conformance-authorization:
	GO=$(GO) .ci/conformance-authorization.sh

# Node 22 and the pinned conformance suites, installed into .tools/ from the
# committed lock files in .ci/npm/, the pinned staticcheck, and the pinned
# kubeconform with its Kubernetes schemas.
tools:
	.ci/tools.sh
	.ci/staticcheck.sh >/dev/null
	.ci/kubeconform.sh >/dev/null

# The official MCP conformance suite against the fixture server
# (example_app/conformance); fails on any failure or warning not listed in
# .ci/conformance-0.1.16-expected-failures.yml.
conformance:
	GO=$(GO) .ci/conformance.sh 0.1.16

# The 0.2.0-alpha.12 suite (2026-07-28, input_required, subscriptions/listen,
# tasks, skills, and the legacy session scenarios) against the same fixture;
# baseline .ci/conformance-alpha-expected-failures.yml (empty).
conformance-alpha:
	GO=$(GO) .ci/conformance.sh alpha

# Both suites again through a round-robin proxy (no stickiness) in front of
# three fixture replicas sharing their sessions on Redis (mcpredis), with
# the same empty baselines: REDIS_URL, else 127.0.0.1:6379, else a
# throwaway redis-server for the run.
conformance-cluster: redis
	GO=$(GO) CONFORMANCE_REPLICAS=3 .ci/conformance.sh 0.1.16

conformance-alpha-cluster: redis
	GO=$(GO) CONFORMANCE_REPLICAS=3 .ci/conformance.sh alpha

# Both suites again through three replicas on a throwaway three-master Redis
# Cluster (.ci/redis-cluster.sh: Debian's redis-server with cluster mode on
# free ports, joined by redis-cli --cluster create), whose URL the replicas
# get in go-redis's cluster form (redis://host:port?addr=...).
conformance-rediscluster: redis
	GO=$(GO) CONFORMANCE_REPLICAS=3 CONFORMANCE_REDIS=cluster .ci/conformance.sh 0.1.16

conformance-alpha-rediscluster: redis
	GO=$(GO) CONFORMANCE_REPLICAS=3 CONFORMANCE_REDIS=cluster .ci/conformance.sh alpha

# The alpha suite per spec revision: `server --requirements REVISION` runs
# what that revision requires, and what it runs without scoring (pending
# scenarios such as json-schema-2020-12, extensions, scenarios added after
# the release), every one at that revision's wire: 2025-11-25 stateful,
# with the initialize handshake; 2026-07-28 stateless, with per-request
# _meta. --suite all runs each scenario at one wire only, so passing it
# says nothing about the other. The suite's own exit status counts only
# the scored scenarios; .ci/conformance.sh fails on a failure or warning in
# any scenario that ran, scored or not. Baselines
# .ci/conformance-REVISION-expected-failures.yml (empty). One process,
# then three replicas on Redis as above.
conformance-revisions: $(REVISIONS:%=conformance-%)
conformance-revisions-cluster: $(REVISIONS:%=conformance-%-cluster)

$(REVISIONS:%=conformance-%): conformance-%:
	GO=$(GO) CONFORMANCE_REQUIREMENTS=$* .ci/conformance.sh alpha

$(REVISIONS:%=conformance-%-cluster): conformance-%-cluster: redis
	GO=$(GO) CONFORMANCE_REPLICAS=3 CONFORMANCE_REQUIREMENTS=$* .ci/conformance.sh alpha

# The side-by-side benchmarks (bench/, a module of its own): every server
# configuration as its own process, one load generator; writes
# bench/RESULTS.md. About 7 minutes; QUICK=1 for about one.
bench:
	$(MAKE) -C bench bench

# The cluster benchmark: one process in memory, one replica on Redis,
# three behind a round-robin proxy, and what a relayed call costs; writes
# bench/RESULTS-cluster.md in about two minutes.
bench-cluster:
	$(MAKE) -C bench cluster

# The soak (bench/internal/soak): the example app, one process and three
# replicas on Redis behind its balancer, about 10 minutes of mixed load
# with a replica SIGKILLed and Redis restarted; writes bench/SOAK.md and
# bench/soak.png and fails when a criterion fails. Not in `make test`,
# which runs its short form (under a minute: the slow-body and
# never-reading clients, the replica kill, the back-to-baseline check).
soak: redis postgres
	$(MAKE) -C bench soak

soak-short: redis postgres
	$(MAKE) -C bench soak QUICK=1

# hookrelay: `make run` runs the whole service on its embedded default;
# `make test` runs every test against real PostgreSQL and Temporal servers.
STATICCHECK := honnef.co/go/tools/cmd/staticcheck@v0.8.2
GO_TEST_FLAGS ?= -count=1 -timeout 30m -parallel 8

# RESULTS: the data file `make bench`, `make chaos` and `make test-cluster`
# append one JSON line a phase to (bench/results, docs/benchmarks.md);
# `go run ./bench/report -w $(RESULTS)` makes BENCHMARKS.md's and
# RELIABILITY.md's tables from it.
# (named once per make: a commit made while `make bench` runs leaves its
# two shapes in one file)
ifndef RESULTS
RESULTS := $(CURDIR)/bench/results/$(shell git rev-parse --short HEAD 2>/dev/null || echo run).jsonl
endif
# a relative RESULTS is the repository's: the tests run in their package's
# directory, where it would not open (and a 30-minute run would end unwritten)
override RESULTS := $(abspath $(RESULTS))

.PHONY: run run-cluster test-cluster cluster-bins test test-helm chaos bench bench-dev bench-cluster bench-extra bench-hostile lint build bootstrap fuzz clean

bootstrap:
	@bash scripts/bootstrap.sh

# build: bin/hookrelay, stamped with the release tag when HEAD has one
# (v0.1.0 gives 0.1.0); otherwise `hookrelay version` reports the build
# info's module version or version.Release (docs/development.md#releasing).
VERSION ?= $(shell git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null)
build:
	go build -ldflags "-X github.com/hookrelay/hookrelay/version.stamped=$(VERSION)" -o bin/hookrelay ./cmd/hookrelay

run: bootstrap build
	./bin/hookrelay dev

# run-cluster: the production-shaped stack on this machine (cluster/,
# docs/cluster.md): PostgreSQL; Temporal built from go.temporal.io/server on
# it, one process per service (frontend, matching, two history hosts sharing
# 16 shards, the internal worker); its Web UI; hookrelay setup; two APIs and
# two workers. Pid files in .hookrelay-cluster/pids/.
run-cluster: bootstrap build cluster-bins
	go run ./cluster/runcluster

cluster-bins:
	@bash scripts/cluster-bins.sh

# test-cluster: 1,000 events across 50 endpoints through that stack, one
# worker killed (kill -9) midway and started again; then the failures a
# cluster must survive, each under a steady publish and reconciled: kill -9
# of history-1, the frontend, matching, one API; a worker added and one
# removed (cluster/*_test.go; about 2½ minutes once the binaries are built).
test-cluster: bootstrap build cluster-bins
	HOOKRELAY_REQUIRE_SERVERS=1 HOOKRELAY_CLUSTER=1 HOOKRELAY_RESULTS=$(RESULTS) bash -o pipefail -c "go test -count=1 -v -run '^TestCluster$$' -timeout 30m ./cluster/ | grep -v '^=== '"

lint:
	@test -z "$$(gofmt -l .)" || (echo "gofmt -l lists:"; gofmt -l .; exit 1)
	go vet ./...
	go run $(STATICCHECK) ./...
	cd deploy && go vet ./... && go run $(STATICCHECK) ./...

test: bootstrap lint
	HOOKRELAY_REQUIRE_SERVERS=1 go test $(GO_TEST_FLAGS) ./...
	$(MAKE) --no-print-directory test-helm

# test-helm: the Helm chart (deploy/helm/hookrelay) rendered with Helm's Go
# library for its default, production and Temporal Cloud values, every object
# decoded strictly into its Kubernetes type. deploy/ is a module of its own,
# so hookrelay's go.mod does not carry Helm and the Kubernetes client.
test-helm:
	cd deploy && go test $(GO_TEST_FLAGS) ./...

# chaos: the reliability suite (chaos/), every scenario: the servers as
# separate processes killed and restarted under a steady publish, then
# reconciled (about 6 minutes). `make test` runs its short scenario.
chaos: bootstrap
	HOOKRELAY_REQUIRE_SERVERS=1 HOOKRELAY_CHAOS=full HOOKRELAY_RESULTS=$(RESULTS) bash -o pipefail -c "go test -count=1 -v -run '^TestChaos$$' -timeout 60m ./chaos/ | grep -v '^=== '"

# bench: hookrelay as `make run` ships it (bench-dev, about 35 minutes), then on
# the production-shaped cluster (bench-cluster, about 40 minutes once its
# binaries are built), each beside its same-run baselines; bench-extra: the
# in-memory delivery benchmark and endpoint health.
bench: bench-dev bench-cluster

bench-dev: bootstrap
	HOOKRELAY_REQUIRE_SERVERS=1 HOOKRELAY_RESULTS=$(RESULTS) go test -count=1 -run '^$$' -bench '^BenchmarkShipped$$' -benchtime 1x -timeout 90m ./bench/

bench-cluster: bootstrap build cluster-bins
	HOOKRELAY_REQUIRE_SERVERS=1 HOOKRELAY_RESULTS=$(RESULTS) go test -count=1 -run '^$$' -bench '^BenchmarkCluster$$' -benchtime 1x -timeout 90m ./bench/

bench-extra: bootstrap
	HOOKRELAY_REQUIRE_SERVERS=1 go test -count=1 -run '^$$' -bench 'BenchmarkDelivery|BenchmarkEndpointHealth' -benchtime 1x -timeout 30m ./bench/

# bench-hostile: hookrelay dev's peak RSS with 200 hostile receivers at once,
# beside 200 polite ones (issue 10; about 2 minutes).
bench-hostile: bootstrap
	HOOKRELAY_REQUIRE_SERVERS=1 go test -count=1 -run '^$$' -bench '^BenchmarkHostileRSS$$' -benchtime 1x -timeout 30m ./bench/

# fuzz: the SAP where parser, then the page-token decoder (about 7 minutes).
fuzz:
	go test -run '^$$' -fuzz FuzzParse -fuzztime 5m -fuzzminimizetime 2s ./where/
	go test -run '^$$' -fuzz FuzzPageToken -fuzztime 2m -fuzzminimizetime 2s ./api/

clean:
	rm -rf bin .hookrelay

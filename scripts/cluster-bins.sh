#!/usr/bin/env bash
# cluster-bins.sh builds the production-shaped stack's Temporal binaries into
# bin/ from the Go module proxy (cluster/temporalserver pins the version):
# temporal-server, temporal-sql-tool (its schema tool) and temporal-ui (the
# Web UI). The first build takes several minutes; later ones are cached.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD
cd cluster/temporalserver
build() { # build NAME PACKAGE [SOURCES…]: when bin/NAME is missing or older than go.mod or a source
	local bin=$ROOT/bin/$1
	if [[ ! -x $bin || -n $(find go.mod "${@:3}" -newer "$bin" -print -quit) ]]; then
		echo "cluster-bins: building $1 (the first time takes a few minutes)"
		go build -o "$ROOT/bin/$1" "$2"
	fi
}
build temporal-server . main.go
build temporal-sql-tool go.temporal.io/server/cmd/tools/sql
build temporal-ui ./ui ui

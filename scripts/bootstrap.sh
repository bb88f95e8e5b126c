#!/usr/bin/env bash
# bootstrap.sh installs what hookrelay's development servers need and a fresh
# machine may lack: the PostgreSQL server binaries, promtool and docker-compose (apt-get) and the Temporal
# CLI (into the project's bin/). It is idempotent and prints nothing when
# there is nothing to do.
set -euo pipefail

TEMPORAL_CLI_VERSION=v1.5.1

cd "$(dirname "${BASH_SOURCE[0]}")/.."
ROOT=$PWD

# have_postgres succeeds when initdb is found where devenv looks for it.
have_postgres() {
	local dir
	if command -v pg_config >/dev/null 2>&1; then
		dir=$(pg_config --bindir 2>/dev/null || true)
		[[ -n $dir && -x $dir/initdb ]] && return 0
	fi
	for dir in /usr/lib/postgresql/*/bin; do
		[[ -x $dir/initdb ]] && return 0
	done
	command -v initdb >/dev/null 2>&1
}

# as_root runs its arguments as root, through sudo when needed.
as_root() {
	if [[ $(id -u) -eq 0 ]]; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		echo "bootstrap: need root (or sudo) to run: $*" >&2
		exit 1
	fi
}

install_postgres() {
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "bootstrap: PostgreSQL server binaries missing and apt-get not found; install PostgreSQL (initdb, pg_ctl, postgres) yourself" >&2
		exit 1
	fi
	echo "bootstrap: installing PostgreSQL server (apt-get install postgresql)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >/dev/null
}

install_temporal() {
	if ! command -v go >/dev/null 2>&1; then
		echo "bootstrap: go not found in PATH; cannot install the temporal CLI" >&2
		exit 1
	fi
	echo "bootstrap: installing temporal CLI $TEMPORAL_CLI_VERSION into bin/ (takes a few minutes)"
	mkdir -p "$ROOT/bin"
	GOBIN="$ROOT/bin" go install "github.com/temporalio/cli/cmd/temporal@$TEMPORAL_CLI_VERSION"
}

# install_promtool installs Debian's prometheus package for promtool, which
# checks the example alerting rules (ops/prometheus) in the tests.
install_promtool() {
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "bootstrap: promtool missing and apt-get not found; install Prometheus' promtool yourself" >&2
		exit 1
	fi
	echo "bootstrap: installing promtool (apt-get install prometheus)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends prometheus >/dev/null
}

# install_compose installs Debian's docker-compose, which validates
# docker-compose.yml in the tests (no Docker engine is needed for that).
install_compose() {
	echo "bootstrap: installing docker-compose (apt-get install docker-compose)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends docker-compose >/dev/null
}

have_postgres || install_postgres
command -v promtool >/dev/null 2>&1 || install_promtool
command -v docker-compose >/dev/null 2>&1 || ! command -v apt-get >/dev/null 2>&1 || install_compose
[[ -x $ROOT/bin/temporal ]] || install_temporal

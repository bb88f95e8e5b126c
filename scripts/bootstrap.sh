#!/usr/bin/env bash
# bootstrap.sh installs what hookrelay's development servers need and a fresh
# machine may lack: the PostgreSQL server binaries, promtool, docker-compose
# and Chromium (apt-get) and the Temporal CLI (into the project's bin/). It is idempotent and prints nothing when
# there is nothing to do.
set -euo pipefail

TEMPORAL_CLI_VERSION=v1.5.1
AZURITE_VERSION=3.37.0

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

# apt_install WHAT PACKAGE installs a Debian package (WHAT says what for).
apt_install() {
	if ! command -v apt-get >/dev/null 2>&1; then
		echo "bootstrap: $1 missing and apt-get not found; install $1 yourself" >&2
		exit 1
	fi
	echo "bootstrap: installing $1 (apt-get install $2)"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -qq >/dev/null
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$2" >/dev/null
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

# install_azurite installs Microsoft's storage emulator with npm into
# bin/azurite and links bin/azurite-blob (devenv.StartAzurite runs it).
install_azurite() {
	command -v npm >/dev/null 2>&1 || apt_install npm npm
	echo "bootstrap: installing azurite $AZURITE_VERSION into bin/azurite (npm)"
	mkdir -p "$ROOT/bin"
	npm install --prefix "$ROOT/bin/azurite" --no-audit --no-fund --loglevel=error "azurite@$AZURITE_VERSION" >/dev/null
	ln -sf azurite/node_modules/.bin/azurite-blob "$ROOT/bin/azurite-blob"
}

# The PostgreSQL server (initdb, pg_ctl, postgres) runs the dev and test
# clusters; promtool (Debian's prometheus package) checks the example
# alerting rules (ops/prometheus) and docker-compose validates
# docker-compose.yml in the tests (no Docker engine is needed for either).
have_postgres || apt_install "the PostgreSQL server" postgresql
command -v promtool >/dev/null 2>&1 || apt_install promtool prometheus
command -v docker-compose >/dev/null 2>&1 || apt_install docker-compose docker-compose
# Chromium, run headless, drives the web console's tests (console/).
command -v chromium >/dev/null 2>&1 || apt_install chromium chromium
[[ -x $ROOT/bin/temporal ]] || install_temporal
# Azurite, the Azure Storage emulator, takes Event Grid dead-letter blobs in
# the tests (eventgrid/, docs/eventgrid.md#dead-letters-in-azure-blob-storage).
[[ -x $ROOT/bin/azurite-blob ]] || install_azurite

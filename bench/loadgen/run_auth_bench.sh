#!/usr/bin/env bash
# Measures the auth API with gpuaas_loadgen against a private dev stack (own state dir, ports and
# build dir, so it never disturbs a stack someone else is running in the same checkout).
#
#   bench/loadgen/run_auth_bench.sh [build-dir]      (default build-dir: build-bench)
#
# Prints one JSON report per run to stdout and the text reports to stderr. Stops the stack on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build-bench}
export GPUAAS_BUILD_DIR=$BUILD
export GPUAAS_STATE_DIR=${GPUAAS_STATE_DIR:-$BUILD/bench-stack}
export GPUAAS_PG_PORT=${GPUAAS_PG_PORT:-15632}
export GPUAAS_AUTH_PORT=${GPUAAS_AUTH_PORT:-17251}
export GPUAAS_STOCK_PORT=${GPUAAS_STOCK_PORT:-17252}
export GPUAAS_STORAGE_PORT=${GPUAAS_STORAGE_PORT:-17253}
export GPUAAS_INSTANCE_PORT=${GPUAAS_INSTANCE_PORT:-17254}
export GPUAAS_METRICS_PORT=${GPUAAS_METRICS_PORT:-9301}
RATE=${RATE:-500}
DURATION=${DURATION:-30s}
WARMUP=${WARMUP:-3s}
TENANT=${TENANT:-bench-tenant}

"$ROOT/tools/gpuaas" up >&2
trap '"$ROOT/tools/gpuaas" down >&2' EXIT
# Point both binaries at the private stack, not at a .gpuaas/stack.env higher up.
set -a
# shellcheck disable=SC1091
. "$GPUAAS_STATE_DIR/stack.env"
set +a
CTL=$BUILD/tools/gpuaasctl/gpuaasctl
LOADGEN=$BUILD/bench/loadgen/gpuaas_loadgen
export XDG_CONFIG_HOME=$GPUAAS_STATE_DIR/ctl-config

"$CTL" login -u "$GPUAAS_ADMIN_USER" --password-file "$GPUAAS_ADMIN_PASSWORD_FILE" >&2
"$CTL" tenants get "$TENANT" >/dev/null 2>&1 || "$CTL" tenants create "$TENANT" --max-gpus 8 >&2

run() {
  "$LOADGEN" --rate "$1" --duration "$DURATION" --warmup "$WARMUP" "${@:2}" --json
}
for method in WhoAmI GetTenant ListTenants; do
  run "$RATE" --method "$method" --tenant "$TENANT"
done
# Login runs scrypt on every call and saturates far below 500/s: measure it at the asked rate
# (to see where it tops out) and then at LOGIN_RATE, a rate it sustains, for its latency.
run "$RATE" --method Login --tenant "$TENANT" --timeout 10s
run "${LOGIN_RATE:-20}" --method Login --tenant "$TENANT"

#!/usr/bin/env bash
# Measures the stock service with stock_bench against a private dev stack (own state dir, ports
# and build dir, so it never disturbs a stack someone else runs in the same checkout).
#
#   bench/stock/run_stock_bench.sh [build-dir]      (default build-dir: build-bench)
#
# The stack starts from nothing (its own state is purged first): `openb` runs first, on a stock
# service that has placed nothing yet, since fgd-pack learns its workload from every request it
# places. Then `create`, `claim` and `list`. One JSON report per run goes to stdout, progress and
# text reports to stderr; the stack's logs stay in $GPUAAS_STATE_DIR/logs (the stock service logs
# one line per call with its ms) until the next run. Stops the stack on exit.
#
# No heartbeats are sent (the simulated nodes have no agents), so the stock service runs with a
# node timeout of a day. Node agents the stack may start are not needed; their nodes cannot
# take these runs' stocks (other node names, other GPU models), and `openb` reports any node that
# joins while it fills.
#
# OPENB_DIR (default ../shared/traces/openb from the checkout): the openb CSVs.
# ONLY="openb create" runs a subset. GPUAAS_SKIP_BUILD=1 uses the build dir as it is.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build-bench}
export GPUAAS_BUILD_DIR=$BUILD
export GPUAAS_STATE_DIR=${GPUAAS_STATE_DIR:-$BUILD/stock-bench-stack}
export GPUAAS_PG_PORT=${GPUAAS_PG_PORT:-55732}
export GPUAAS_AUTH_PORT=${GPUAAS_AUTH_PORT:-50351}
export GPUAAS_STOCK_PORT=${GPUAAS_STOCK_PORT:-50352}
export GPUAAS_STORAGE_PORT=${GPUAAS_STORAGE_PORT:-50353}
export GPUAAS_INSTANCE_PORT=${GPUAAS_INSTANCE_PORT:-50354}
export GPUAAS_METRICS_PORT=${GPUAAS_METRICS_PORT:-9401}
export GPUAAS_STOCK_NODE_TIMEOUT_SECONDS=${GPUAAS_STOCK_NODE_TIMEOUT_SECONDS:-86400}
OPENB_DIR=${OPENB_DIR:-$ROOT/../shared/traces/openb}
ONLY=${ONLY:-openb create claim list}
DURATION=${DURATION:-30s}
WARMUP=${WARMUP:-3s}

[ -f "$OPENB_DIR/openb_node_list_gpu_node.csv" ] || {
  echo "no openb trace in $OPENB_DIR; set OPENB_DIR" >&2
  exit 1
}
if [ "${GPUAAS_SKIP_BUILD:-0}" != 1 ]; then
  cmake -S "$ROOT" -B "$BUILD" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$BUILD" -j "${GPUAAS_JOBS:-2}" --target gpuaas-auth gpuaas-stock gpuaas-health \
    stock_bench >&2
fi
# Only this script's private stack: its state dir and the PostgreSQL cluster named after it.
"$ROOT/tools/gpuaas" down --purge >&2
GPUAAS_SKIP_BUILD=1 "$ROOT/tools/gpuaas" up >&2
trap 'GPUAAS_SKIP_BUILD=1 "$ROOT/tools/gpuaas" down >&2' EXIT
# Point stock_bench at the private stack, not at a .gpuaas/stack.env higher up.
set -a
# shellcheck disable=SC1091
. "$GPUAAS_STATE_DIR/stack.env"
set +a
BENCH=$BUILD/bench/stock/stock_bench
echo "load before the runs: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2

for what in $ONLY; do
  case "$what" in
    openb)
      "$BENCH" openb --nodes-csv "$OPENB_DIR/openb_node_list_gpu_node.csv" \
        --pods-csv "$OPENB_DIR/openb_pod_list_default.csv" --seed 42 --policy fgd-pack ;;
    create) "$BENCH" create --nodes 200 --slots 1000 --repeats 5 ;;
    claim) "$BENCH" claim --claimers 32 --duration "$DURATION" --warmup "$WARMUP" ;;
    list) "$BENCH" list --rate 500 --page-size 50 --duration "$DURATION" --warmup "$WARMUP" ;;
    *) echo "unknown bench $what" >&2; exit 2 ;;
  esac
  echo "load after $what: $(cut -d' ' -f1-3 /proc/loadavg)" >&2
done

#!/usr/bin/env bash
# Measures the stock service with stock_bench against a private dev stack (own state dir, ports
# and build dir, so it never disturbs a stack someone else runs in the same checkout).
#
#   bench/stock/run_stock_bench.sh [build-dir]      (default build-dir: build-bench)
#
# The stack starts from nothing (its own state is purged first): `openb` runs first, on a stock
# service that has placed nothing yet, since fgd-pack learns its workload from every request it
# places. Then `create`, `claim` (closed loop), `claim-rate` (paced at CLAIM_RATE, 100/s) and
# `list`. One JSON report per run goes to stdout, progress and
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
export GPUAAS_PG_PORT=${GPUAAS_PG_PORT:-15732}
export GPUAAS_AUTH_PORT=${GPUAAS_AUTH_PORT:-17351}
export GPUAAS_STOCK_PORT=${GPUAAS_STOCK_PORT:-17352}
export GPUAAS_STORAGE_PORT=${GPUAAS_STORAGE_PORT:-17353}
export GPUAAS_INSTANCE_PORT=${GPUAAS_INSTANCE_PORT:-17354}
export GPUAAS_METRICS_PORT=${GPUAAS_METRICS_PORT:-9401}
# The bench registers its own simulated nodes; the stack's agents would take its stocks.
export GPUAAS_AGENTS=0
export GPUAAS_STOCK_NODE_TIMEOUT_SECONDS=${GPUAAS_STOCK_NODE_TIMEOUT_SECONDS:-86400}
OPENB_DIR=${OPENB_DIR:-$ROOT/../shared/traces/openb}
ONLY=${ONLY:-openb create claim claim-rate list}
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

# CPU time (clock ticks) of gpuaas-stock and of the stack's PostgreSQL processes, to tell after
# each run where the machine's time went.
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
stock_ticks() { ticks "$(cat "$GPUAAS_STATE_DIR/pids/stock.pid")"; }
pg_ticks() {
  local pm t=0 p
  pm=$(head -1 "$(cat "$GPUAAS_STATE_DIR/pg-dir")/data/postmaster.pid")
  for p in "$pm" $(pgrep -P "$pm"); do t=$((t + $(ticks "$p"))); done
  echo "$t"
}
HZ=$(getconf CLK_TCK)

for what in $ONLY; do
  s0=$(stock_ticks) p0=$(pg_ticks) c0=$(date +%s.%N)
  case "$what" in
    openb)
      "$BENCH" openb --nodes-csv "$OPENB_DIR/openb_node_list_gpu_node.csv" \
        --pods-csv "$OPENB_DIR/openb_pod_list_default.csv" --seed 42 --policy fgd-pack ;;
    create) "$BENCH" create --nodes 200 --slots 1000 --repeats 5 ;;
    claim) "$BENCH" claim --claimers 32 --duration "$DURATION" --warmup "$WARMUP" ;;
    # The same claimers, paced: latency at a claim rate the service sustains.
    claim-rate)
      "$BENCH" claim --claimers 32 --rate "${CLAIM_RATE:-100}" --duration "$DURATION" \
        --warmup "$WARMUP" ;;
    list) "$BENCH" list --rate 500 --page-size 50 --duration "$DURATION" --warmup "$WARMUP" ;;
    *) echo "unknown bench $what" >&2; exit 2 ;;
  esac
  awk -v s="$(( $(stock_ticks) - s0 ))" -v p="$(( $(pg_ticks) - p0 ))" -v hz="$HZ" \
      -v c0="$c0" -v c1="$(date +%s.%N)" -v what="$what" -v load="$(cut -d' ' -f1 /proc/loadavg)" \
      'BEGIN { printf "%s: %.1f s wall; CPU: gpuaas-stock %.1f s, postgres %.1f s; load %s\n", what, c1 - c0, s / hz, p / hz, load }' >&2
done

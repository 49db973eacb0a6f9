#!/usr/bin/env bash
# Measures the instance service's budgets (bench/RESULTS.md) against a private dev stack (own
# state dir, ports and build dir) whose simulated fleet is three 8×A100-80GB agents running real
# sandboxed workloads:
#   start-one    100 starts one at a time: CreateInstance answer and create → RUNNING
#   start-rate   starts at RATE per second (50) for COUNT_RATE instances (500)
#   get          GetInstance at 500/s for DURATION (20 s) with gpuaas_loadgen
#   idle         IDLE_COUNT (1,000) instances RUNNING, then the CPU gpuaas-instance uses over
#                IDLE_WINDOW seconds (60) with nothing changing: the reconciler and the agents'
#                reports at rest
#
#   bench/instance/run_instance_bench.sh [build-dir]      (default build-dir: build)
#
# The workload of start-*: a python3 process that listens on its probe port at once. Of idle: a
# sleep without ports (RUNNING once its sandbox is up), so 1,000 of them fit in memory. The spec
# is a fiftieth of an A100 (gpu_share_milli 20): 1,200 slots on the three nodes. ONLY="get idle"
# runs a subset. Stops and purges the private stack on exit.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build}
export GPUAAS_BUILD_DIR=$BUILD GPUAAS_SKIP_BUILD=1
export GPUAAS_STATE_DIR=${GPUAAS_STATE_DIR:-$BUILD/instance-bench-stack}
export GPUAAS_PG_PORT=${GPUAAS_PG_PORT:-15832}
export GPUAAS_AUTH_PORT=${GPUAAS_AUTH_PORT:-17451}
export GPUAAS_STOCK_PORT=${GPUAAS_STOCK_PORT:-17452}
export GPUAAS_STORAGE_PORT=${GPUAAS_STORAGE_PORT:-17453}
export GPUAAS_INSTANCE_PORT=${GPUAAS_INSTANCE_PORT:-17454}
export GPUAAS_S3_PORT=${GPUAAS_S3_PORT:-9400}
export GPUAAS_METRICS_PORT=${GPUAAS_METRICS_PORT:-9501}
export GPUAAS_AGENT_PORT=${GPUAAS_AGENT_PORT:-17461}
export GPUAAS_AGENT_METRICS_PORT=${GPUAAS_AGENT_METRICS_PORT:-9561}
export GPUAAS_SIM_AGENTS="bench-a 8xA100-80GB;bench-b 8xA100-80GB;bench-c 8xA100-80GB"
ONLY=${ONLY:-start-one start-rate get idle}
RATE=${RATE:-50}
COUNT_RATE=${COUNT_RATE:-500}
DURATION=${DURATION:-20s}
IDLE_COUNT=${IDLE_COUNT:-1000}
IDLE_WINDOW=${IDLE_WINDOW:-60}

"$ROOT/tools/gpuaas" down --purge >&2
"$ROOT/tools/gpuaas" up >&2
trap '"$ROOT/tools/gpuaas" down --purge >&2' EXIT
set -a
# shellcheck disable=SC1091
. "$GPUAAS_STATE_DIR/stack.env"
set +a
home=$(mktemp -d)
trap '"$ROOT/tools/gpuaas" down --purge >&2; rm -rf "$home"' EXIT
ctl() { XDG_CONFIG_HOME=$home "$BUILD/tools/gpuaasctl/gpuaasctl" "$@"; }
ctl login -u admin --password-file "$GPUAAS_ADMIN_PASSWORD_FILE" >/dev/null
ctl tenants create bench --max-gpus 5000 --max-instances 5000 >/dev/null
ctl specs create bench.fiftieth --gpu-type A100-80GB --gpu-num 1 --gpu-share-milli 20 --cpu 100m \
  --memory 256Mi --disk 1Gi --price-per-hour 0.05 --currency USD >/dev/null
for _ in $(seq 1 120); do
  [ "$(ctl nodes list | grep -c ' READY ')" -ge 3 ] && break
  sleep 0.5
done
for _ in 1 2 3; do ctl stocks create --spec bench.fiftieth -n 400 >/dev/null; done
ctl stocks summary >&2
echo "load before the runs: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2

START=$BUILD/bench/instance/instance_start_bench
ticks() { awk '{print $14 + $15}' "/proc/$1/stat" 2>/dev/null || echo 0; }
instance_pid=$(cat "$GPUAAS_STATE_DIR/pids/instance.pid")
HZ=$(getconf CLK_TCK)
# CPU seconds so far of: gpuaas-instance, gpuaas-stock, the agents, PostgreSQL (postmaster and
# its children), and everything else on the machine (workloads, their sandboxes, the bench).
cpu_split() {
  local inst stock agents=0 pg=0 pm p total
  inst=$(ticks "$instance_pid")
  stock=$(ticks "$(cat "$GPUAAS_STATE_DIR/pids/stock.pid")")
  for node in bench-a bench-b bench-c; do
    agents=$((agents + $(ticks "$(cat "$GPUAAS_STATE_DIR/pids/agent-$node.child" 2>/dev/null || cat "$GPUAAS_STATE_DIR/pids/agent-$node.pid")")))
  done
  pm=$(head -1 "$(cat "$GPUAAS_STATE_DIR/pg-dir")/data/postmaster.pid")
  for p in "$pm" $(pgrep -P "$pm"); do pg=$((pg + $(ticks "$p"))); done
  total=$(awk '/^cpu / {print $2 + $3 + $4 + $7 + $8}' /proc/stat)
  echo "$inst $stock $agents $pg $total"
}
# cpu_report BEFORE AFTER SECONDS: where the machine's CPU went between two cpu_split readings.
cpu_report() {
  awk -v hz="$HZ" -v w="$3" -v a="$1" -v b="$2" 'BEGIN {
    split(a, x, " "); split(b, y, " ");
    t = (y[5] - x[5]) / hz; i = (y[1] - x[1]) / hz; s = (y[2] - x[2]) / hz;
    g = (y[3] - x[3]) / hz; p = (y[4] - x[4]) / hz;
    printf "cpu            %.0f core-s in %.0f s: instance %.0f, stock %.0f, agents %.0f, postgres %.0f, the rest (workloads, sandboxes, bench) %.0f\n",
      t, w, i, s, g, p, t - i - s - g - p }' >&2
}

for what in $ONLY; do
  echo "== $what" >&2
  case "$what" in
    start-one)
      "$START" --spec bench.fiftieth --tenant bench --count 100 --rate 0 --prefix one ;;
    start-rate)
      c0=$(cpu_split) s0=$(date +%s)
      "$START" --spec bench.fiftieth --tenant bench --count "$COUNT_RATE" --rate "$RATE" \
        --prefix rate --timeout 120
      cpu_report "$c0" "$(cpu_split)" $(($(date +%s) - s0)) ;;
    get)
      "$START" --spec bench.fiftieth --tenant bench --count 1 --rate 0 --prefix get --keep
      id=$(ctl instances list --tenant bench --state running -o json \
             | python3 -c 'import json,sys; print(json.load(sys.stdin)["instances"][0]["instance_id"])')
      "$BUILD/bench/loadgen/gpuaas_loadgen" --method GetInstance --instance "$id" \
        --tenant bench --rate 500 --duration "$DURATION" --warmup 3s ;;
    idle)
      "$START" --spec bench.fiftieth --tenant bench --count "$IDLE_COUNT" --rate "$RATE" \
        --prefix idle --no-probe --keep --timeout 300
      running=$(ctl instances list --tenant bench --state running --all | grep -c ' running ' || true)
      sleep 10  # the last starts' reports settle
      t0=$(ticks "$instance_pid")
      a0=0
      for node in bench-a bench-b bench-c; do
        a0=$((a0 + $(ticks "$(cat "$GPUAAS_STATE_DIR/pids/agent-$node.child" 2>/dev/null || cat "$GPUAAS_STATE_DIR/pids/agent-$node.pid")")))
      done
      sleep "$IDLE_WINDOW"
      t1=$(ticks "$instance_pid")
      a1=0
      for node in bench-a bench-b bench-c; do
        a1=$((a1 + $(ticks "$(cat "$GPUAAS_STATE_DIR/pids/agent-$node.child" 2>/dev/null || cat "$GPUAAS_STATE_DIR/pids/agent-$node.pid")")))
      done
      awk -v n="$running" -v t=$((t1 - t0)) -v a=$((a1 - a0)) -v hz="$HZ" -v w="$IDLE_WINDOW" \
        'BEGIN { printf "idle           %d instances RUNNING; over %d s gpuaas-instance used %.2f %% of a core, the three agents %.2f %%\n", n, w, 100 * t / hz / w, 100 * a / hz / w }' ;;
  esac
done

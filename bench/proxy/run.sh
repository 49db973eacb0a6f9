#!/usr/bin/env bash
# The proxy benchmark (bench/RESULTS.md, "proxy"): starts proxy_bench_upstream (a trivial Beast server) and
# gpuaas-proxy with a static route to it (--static-route-for-benchmarks, a public port so the
# load generator sends no token; private routes are verified the same way), runs proxy_bench,
# stops both.
#   bench/proxy/run.sh [BUILD_DIR] [proxy_bench flags...]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build}
shift || true
tmp=$(mktemp -d)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
UP=$(free_port)
PX=$(free_port)
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
"$BUILD/bench/proxy/proxy_bench_upstream" "$UP" >"$tmp/upstream.log" 2>&1 &
up_pid=$!
# shellcheck source=bench_proxy.sh
. "$ROOT/bench/proxy/bench_proxy.sh"
start_bench_proxy "$BUILD" "$tmp" "$PX" "$UP"
px_pid=$!
trap 'kill $px_pid $up_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$PX/.gpuaas/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
"$BUILD/bench/proxy/proxy_bench" "$PX" "$UP" "$px_pid" "$@"

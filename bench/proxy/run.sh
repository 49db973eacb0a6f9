#!/usr/bin/env bash
# The proxy benchmark (bench/RESULTS.md, "proxy"): starts proxy_bench_upstream (a trivial Beast server) and
# gpuaas-proxy with a static route to it (--static-route-for-benchmarks, a public port so the
# load generator sends no token; private routes are verified the same way), runs proxy_bench,
# stops both. The connection caps are lifted: one load generator stands for many clients.
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
echo unused.unused >"$tmp/api-key"
openssl rand -hex 32 >"$tmp/cookie"
"$BUILD/services/proxy/gpuaas-proxy" --listen "127.0.0.1:$PX" --metrics-listen 127.0.0.1:0 \
  --instance-addr 127.0.0.1:1 --auth-addr 127.0.0.1:1 --api-key-file "$tmp/api-key" \
  --cookie-secret-file "$tmp/cookie" --log-level warn \
  --max-connections 100000 --max-connections-per-client 100000 \
  --static-route-for-benchmarks "web-1-8080=bench@127.0.0.1:$UP,public" >"$tmp/proxy.log" 2>&1 &
px_pid=$!
trap 'kill $px_pid $up_pid 2>/dev/null; rm -rf "$tmp"' EXIT
for _ in $(seq 1 100); do
  curl -fs "http://127.0.0.1:$PX/.gpuaas/healthz" >/dev/null 2>&1 && break
  sleep 0.1
done
"$BUILD/bench/proxy/proxy_bench" "$PX" "$UP" "$px_pid" "$@"

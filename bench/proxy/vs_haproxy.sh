#!/usr/bin/env bash
# gpuaas-proxy beside HAProxy (bench/RESULTS.md, "proxy beside HAProxy"): nginx serves a small
# page; HAProxy (one thread) and gpuaas-proxy (a public route, every check on) each forward to
# it; wrk loads nginx directly, then each proxy, in turn, ROUNDS times, so drift in the machine's
# load hits all three alike. Prints req/s and p50/p99 per round and the medians.
#   bench/proxy/vs_haproxy.sh [BUILD_DIR] [ROUNDS] [SECONDS]
# Needs haproxy, nginx-light and wrk (Debian packages; not part of the test install).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${1:-$ROOT/build}
ROUNDS=${2:-5}
SECONDS_EACH=${3:-10}
for tool in haproxy nginx wrk; do
  command -v "$tool" >/dev/null || { echo "needs $tool: apt-get install haproxy nginx-light wrk" >&2; exit 1; }
done
tmp=$(mktemp -d)
pids=()
trap 'kill "${pids[@]}" 2>/dev/null; wait 2>/dev/null; rm -rf "$tmp"' EXIT
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
NG=$(free_port) HA=$(free_port) PX=$(free_port)
ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
HOST=web-1-8080.gpuaas.localhost

mkdir -p "$tmp/nginx"
head -c 600 /dev/zero | tr '\0' 'x' >"$tmp/nginx/index.html"
cat >"$tmp/nginx.conf" <<CONF
daemon off; worker_processes 1; pid $tmp/nginx.pid; error_log $tmp/nginx-error.log;
events { worker_connections 4096; }
http { access_log off; keepalive_requests 1000000;
  client_body_temp_path $tmp; proxy_temp_path $tmp; fastcgi_temp_path $tmp;
  uwsgi_temp_path $tmp; scgi_temp_path $tmp;
  server { listen 127.0.0.1:$NG; root $tmp/nginx; } }
CONF
nginx -c "$tmp/nginx.conf" -p "$tmp" & pids+=($!)

cat >"$tmp/haproxy.cfg" <<CONF
global
  nbthread 1
  maxconn 5000
defaults
  mode http
  timeout connect 5s
  timeout client 30s
  timeout server 30s
  option http-keep-alive
frontend web
  bind 127.0.0.1:$HA
  default_backend nginx
backend nginx
  http-reuse always
  server n1 127.0.0.1:$NG
CONF
haproxy -f "$tmp/haproxy.cfg" -db & pids+=($!)

# shellcheck source=bench_proxy.sh
. "$ROOT/bench/proxy/bench_proxy.sh"
start_bench_proxy "$BUILD" "$tmp" "$PX" "$NG"
pids+=($!)
for port in $NG $HA $PX; do
  for _ in $(seq 1 100); do
    curl -fs -H "Host: $HOST" "http://127.0.0.1:$port/" >/dev/null 2>&1 && break
    sleep 0.1
  done
  curl -fs -H "Host: $HOST" "http://127.0.0.1:$port/" >/dev/null || { echo "port $port does not answer" >&2; exit 1; }
done

# wrk's --latency table: "50%  1.23ms"; in ms.
ms() { awk -v p="$1" '$1==p { v=$2; u=v; sub(/[0-9.]+/,"",u); sub(/[a-z]+$/,"",v);
  if (u=="us") v/=1000; else if (u=="s") v*=1000; printf "%.3f", v }'; }
run() {
  local out
  out=$(wrk -t2 -c32 -d"${SECONDS_EACH}s" --latency -H "Host: $HOST" "http://127.0.0.1:$1/")
  printf '%s %s %s\n' "$(awk '/Requests\/sec/ {print $2}' <<<"$out")" \
    "$(ms 50% <<<"$out")" "$(ms 99% <<<"$out")"
}
echo "round target req/s p50_ms p99_ms"
for r in $(seq 1 "$ROUNDS"); do
  for t in nginx:$NG haproxy:$HA gpuaas-proxy:$PX; do
    echo "$r ${t%%:*} $(run "${t##*:}")"
  done
done | tee "$tmp/rounds"
echo "median over $ROUNDS rounds (wrk -t2 -c32 -d${SECONDS_EACH}s):"
median() { sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)]}'; }
for t in nginx haproxy gpuaas-proxy; do
  printf '  %-13s %8.0f req/s  p50 %s ms  p99 %s ms\n' "$t" \
    "$(awk -v t=$t '$2==t {print $3}' "$tmp/rounds" | median)" \
    "$(awk -v t=$t '$2==t {print $4}' "$tmp/rounds" | median)" \
    "$(awk -v t=$t '$2==t {print $5}' "$tmp/rounds" | median)"
done

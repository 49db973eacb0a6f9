# Sourced by the proxy benchmarks: start_bench_proxy BUILD_DIR TMP_DIR PORT UPSTREAM_PORT starts
# gpuaas-proxy in the background (its pid in $! for the caller) with one public static route,
# web-1-8080.gpuaas.localhost, to 127.0.0.1:UPSTREAM_PORT, and no control plane behind it. The
# connection caps are lifted: one load generator stands for many clients.
start_bench_proxy() {
  local build=$1 tmp=$2 port=$3 upstream=$4
  echo unused.unused >"$tmp/api-key"
  openssl rand -hex 32 >"$tmp/cookie"
  "$build/services/proxy/gpuaas-proxy" --listen "127.0.0.1:$port" --metrics-listen 127.0.0.1:0 \
    --instance-addr 127.0.0.1:1 --auth-addr 127.0.0.1:1 --api-key-file "$tmp/api-key" \
    --cookie-secret-file "$tmp/cookie" --log-level warn \
    --max-connections 100000 --max-connections-per-client 100000 \
    --static-route-for-benchmarks "web-1-8080=bench@127.0.0.1:$upstream,public" \
    >"$tmp/proxy.log" 2>&1 &
}

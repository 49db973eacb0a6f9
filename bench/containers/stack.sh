# Sourced by bench/containers/*.sh: a private dev stack (own state dir, build dir and ports, so
# it runs beside other stacks) with one simulated 8×A100-80GB node running OCI containers, the
# catalog's `tiny` image (busybox httpd, tools/images/tiny) registered from the stack's registry,
# a spec of SHARE_MILLI thousandths of an A100 (20: 400 slots) and STOCKS (400) of it. Defines `ctl` (gpuaasctl logged in
# as the admin), NODE, AGENT_PID and `ticks PID` (utime + stime in clock ticks). Takes the stack
# down with --purge on exit.
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export GPUAAS_BUILD_DIR=$BUILD GPUAAS_SKIP_BUILD=1
export GPUAAS_STATE_DIR=${GPUAAS_STATE_DIR:-$BUILD/containers-bench-stack}
export GPUAAS_PG_PORT=${GPUAAS_PG_PORT:-15932}
export GPUAAS_REGISTRY_PORT=${GPUAAS_REGISTRY_PORT:-17550}
export GPUAAS_AUTH_PORT=${GPUAAS_AUTH_PORT:-17551}
export GPUAAS_STOCK_PORT=${GPUAAS_STOCK_PORT:-17552}
export GPUAAS_STORAGE_PORT=${GPUAAS_STORAGE_PORT:-17553}
export GPUAAS_INSTANCE_PORT=${GPUAAS_INSTANCE_PORT:-17554}
export GPUAAS_S3_PORT=${GPUAAS_S3_PORT:-9450}
export GPUAAS_METRICS_PORT=${GPUAAS_METRICS_PORT:-9601}
export GPUAAS_AGENT_PORT=${GPUAAS_AGENT_PORT:-17561}
export GPUAAS_AGENT_METRICS_PORT=${GPUAAS_AGENT_METRICS_PORT:-9661}
export GPUAAS_PROXY_PORT=${GPUAAS_PROXY_PORT:-8580}
export GPUAAS_GATEWAY_PORT=${GPUAAS_GATEWAY_PORT:-8590}
NODE=bench-ctr
export GPUAAS_SIM_AGENTS="$NODE 8xA100-80GB"

"$ROOT/tools/gpuaas" down --purge >&2
home=$(mktemp -d)
trap '"$ROOT/tools/gpuaas" down --purge >&2; rm -rf "$home"' EXIT
"$ROOT/tools/gpuaas" up >&2
set -a
# shellcheck disable=SC1091
. "$GPUAAS_STATE_DIR/stack.env"
set +a
ctl() { XDG_CONFIG_HOME=$home "$BUILD/tools/gpuaasctl/gpuaasctl" "$@"; }
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
AGENT_PID=$(cat "$GPUAAS_STATE_DIR/pids/agent-$NODE.child" 2>/dev/null || cat "$GPUAAS_STATE_DIR/pids/agent-$NODE.pid")
ctl login -u admin --password-file "$GPUAAS_ADMIN_PASSWORD_FILE" >/dev/null
ctl tenants create bench --max-gpus 5000 --max-instances 5000 >/dev/null
ctl specs create bench.share --gpu-type A100-80GB --gpu-num 1 --gpu-share-milli "${SHARE_MILLI:-20}" --cpu 100m \
  --memory 256Mi --disk 1Gi --price-per-hour 0.05 --currency USD >/dev/null
tiny_version=$(awk '$1 == "tiny" { print $2 }' "$ROOT/tools/images/versions")
ctl images create tiny --version "$tiny_version" \
  --oci "127.0.0.1:$GPUAAS_REGISTRY_PORT/gpuaas/tiny:$tiny_version" \
  --command "exec busybox httpd -f -p 8080 -h /opt/gpuaas/tiny" --port 8080/http,probe >/dev/null
for _ in $(seq 1 120); do
  ctl nodes list | grep -q ' READY ' && break
  sleep 0.5
done
ctl stocks create --spec bench.share -n "${STOCKS:-400}" >/dev/null

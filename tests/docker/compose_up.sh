#!/usr/bin/env bash
# ctest compose_up: docker/docker-compose.yml for real (issue 34). A Docker engine of the test's
# own (tools/docker-engine), the platform's image from this build (docker/build-images), the
# whole stack up, and the README's walk-through against it from this machine, as a user runs it:
# gpuaasctl against the published ports, the catalog's images pushed to the stack's registry,
# Jupyter on node 1 through the proxy writes /data/x, S3 lists it; stopped, node 1 drained, the
# next start lands on node 2 (another container) and reads x; the console and the REST API
# answer; a workload reaches neither the control plane nor the other node. `down -v` leaves no
# container, network or volume of the project.
#   compose_up.sh SOURCE_DIR BUILD_DIR
# GPUAAS_COMPOSE_KEEP=1 leaves the stack and its engine up after a failure, to look at it.
set -euo pipefail
src=$(cd "$1" && pwd)
build=$(cd "$2" && pwd)

fail() { echo "FAIL: $*" >&2; exit 1; }
[ "$(id -u)" = 0 ] || fail "needs root (a Docker engine of its own)"
for tool in dockerd containerd docker-compose mmdebstrap; do
  command -v "$tool" >/dev/null || fail "no $tool (tools/install-deps installs it)"
done

# One compose test at a time on a machine: its engine's data root (the images, kept between
# runs) is one directory.
exec 9>/tmp/gpuaas-compose-test.lock
flock 9
tmp=$(mktemp -d /tmp/gpuaas-compose.XXXXXX)
engine=$tmp/engine
project=gpuaas-test-$$
compose=(docker-compose -p "$project" -f "$src/docker/docker-compose.yml"
         --env-file "$tmp/env")
cleanup() {
  local rc=$?
  set +e
  if [ $rc != 0 ] && [ -n "${DOCKER_HOST:-}" ]; then
    "${compose[@]}" ps
    for service in instance agent-1 agent-2 proxy; do
      "${compose[@]}" logs --tail 30 "$service" 2>&1 | tail -n 30
    done
  fi
  if [ $rc != 0 ] && [ -n "${GPUAAS_COMPOSE_KEEP:-}" ]; then
    echo "kept for a look: DOCKER_HOST=$DOCKER_HOST ${compose[*]}"
    exit $rc
  fi
  [ -n "${DOCKER_HOST:-}" ] && "${compose[@]}" down -v --remove-orphans >/dev/null 2>&1
  "$src/tools/docker-engine" stop "$engine"
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

DOCKER_HOST=$("$src/tools/docker-engine" start "$engine" \
  "${GPUAAS_DOCKER_DATA:-/var/lib/gpuaas/docker-test}")
export DOCKER_HOST
started=$(date +%s%N)
"$src/docker/build-images" "$build"

# Free ports below the ephemeral range, the dev stack's variables (free_port runs in a subshell:
# the caller records what it took); a /24 no interface here has.
read -r ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range
taken=" "
free_port() {
  local p
  while :; do
    p=$((23000 + RANDOM % (ephemeral_low - 23000)))
    [[ $taken == *" $p "* ]] && continue
    [ -z "$(ss -Hltn "sport = :$p")" ] && { echo "$p"; return; }
  done
}
for name in AUTH STOCK STORAGE S3 INSTANCE REGISTRY PROXY GATEWAY; do
  port=$(free_port)
  taken+="$port "
  export "GPUAAS_${name}_PORT=$port"
done
for n in $(shuf -i 1-250); do
  ip -4 -o addr | grep -q " 10\.233\.$n\." || break
done
export GPUAAS_COMPOSE_NET=10.233.$n GPUAAS_COMPOSE_SECRETS=$tmp/secrets
printf 'POSTGRES_PASSWORD=%s\n' "$(head -c 18 /dev/urandom | base64 | tr -d '/+=')" >"$tmp/env"
"$src/docker/make-secrets" "$GPUAAS_COMPOSE_SECRETS" >/dev/null

images_ms=$((($(date +%s%N) - started) / 1000000))
up_started=$(date +%s%N)
"${compose[@]}" up -d >"$tmp/up.log" 2>&1 || { cat "$tmp/up.log"; fail "docker-compose up"; }
walk=$tmp/walk
mkdir -p "$walk/home"
ctl=(env HOME="$walk/home" XDG_CONFIG_HOME="$walk/config" "$build/tools/gpuaasctl/gpuaasctl"
     --auth-addr "127.0.0.1:$GPUAAS_AUTH_PORT" --stock-addr "127.0.0.1:$GPUAAS_STOCK_PORT"
     --storage-addr "127.0.0.1:$GPUAAS_STORAGE_PORT"
     --instance-addr "127.0.0.1:$GPUAAS_INSTANCE_PORT")
as_admin() {
  "${ctl[@]}" login --user admin --password-file "$GPUAAS_COMPOSE_SECRETS/bootstrap_admin_password"
}
as_alice() { "${ctl[@]}" login --user alice --password-file "$walk/alice.pw"; }
# Both nodes READY: the stack is up.
for _ in $(seq 1 120); do
  as_admin >/dev/null 2>&1 && [ "$("${ctl[@]}" nodes list 2>/dev/null | grep -ci ready)" = 2 ] \
    && break
  sleep 1
done
"${ctl[@]}" nodes list >"$walk/nodes.txt" 2>&1 || true
[ "$(grep -ci ready "$walk/nodes.txt")" = 2 ] || { cat "$walk/nodes.txt"; fail "two READY nodes"; }
up_ms=$((($(date +%s%N) - up_started) / 1000000))
echo "images ready in ${images_ms} ms; docker-compose up to two READY nodes: ${up_ms} ms"

# The catalog's images, pushed from this machine; the nodes pull them from registry:5000.
"$src/tools/images/build-oci-images" >"$walk/oci.txt" 2>&1 || { cat "$walk/oci.txt"; fail "OCI images"; }
mkdir -p "$walk/registry"
GPUAAS_REGISTRY_HOST=127.0.0.1 "$src/tools/registry" push "$walk/registry" "$GPUAAS_REGISTRY_PORT" \
  >"$walk/push.txt" 2>&1 || { cat "$walk/push.txt"; fail "push the catalog to the stack's registry"; }

(as_admin \
  && "${ctl[@]}" specs create a100.1x --gpu-type A100-80GB --gpu-num 1 --cpu 8 --memory 32Gi \
       --disk 100Gi --price-per-hour 1.10 --description "one A100" \
  && "${ctl[@]}" storage-specs create standard-10g --size 10Gi --max-files 100000 \
       --price-per-gb-hour 0.0001 \
  && "$src/tools/images/create-images" --registry registry:5000 "${ctl[@]}" \
  && "${ctl[@]}" tenants create studio-a --max-gpus 16 --max-instances 20 --max-storage-bytes 1Ti \
  && echo "a-long-password" >"$walk/alice.pw" \
  && "${ctl[@]}" users create alice --tenant studio-a --role tenant-admin \
       --password-file "$walk/alice.pw" \
  && "${ctl[@]}" stocks create --spec a100.1x -n 2) >"$walk/setup.txt" 2>&1 \
  || { cat "$walk/setup.txt"; fail "the admin's part of the walk-through"; }
(as_alice \
  && "${ctl[@]}" storages create work --spec standard-10g \
  && "${ctl[@]}" accessors create work --ttl 1h) >"$walk/alice.txt" 2>&1 \
  || { cat "$walk/alice.txt"; fail "alice's storage"; }

# run_cell CODE: the cell's output, run in nb-1's Jupyter through the stack's proxy.
run_cell() {
  local token
  token=$("${ctl[@]}" token) || fail "gpuaasctl token"
  env -i HOME="$walk/home" /usr/bin/python3 "$src/tests/images/jupyter_exec.py" \
    --base-url "http://127.0.0.1:$GPUAAS_PROXY_PORT/" \
    --host "nb-1-8888.gpuaas.localhost:$GPUAAS_PROXY_PORT" \
    --header "Authorization: Bearer $token" "$1"
}
node_of() { "${ctl[@]}" instances get nb-1 | awk '$1 == "NODE:" { print $2 }'; }

created=$(date +%s%N)
"${ctl[@]}" instances create nb-1 --spec a100.1x --image jupyter --storage work --wait \
  >"$walk/nb.txt" 2>&1 || { cat "$walk/nb.txt"; fail "jupyter on a compose node"; }
first=$(node_of)
echo "nb-1 (Jupyter, its image pulled by the node) RUNNING $((($(date +%s%N) - created) / 1000000)) ms after create;" \
  "$((($(date +%s%N) - up_started) / 1000000)) ms after docker-compose up"
cell=$(run_cell "open('/data/x', 'w').write('written on $first'); 1+1") \
  || fail "jupyter through the proxy: $cell"
grep -q '"result": "2"' <<<"$cell" || fail "jupyter ran the cell as: $cell"
key=$(awk '/^access key id:/{print $4}' "$walk/alice.txt")
secret=$(awk '/^secret access key:/{print $4}' "$walk/alice.txt")
aws=$(command -v /usr/bin/aws aws | head -n1) || fail "no AWS CLI"
env -u AWS_PROFILE HOME="$walk/home" AWS_CONFIG_FILE=/dev/null AWS_ACCESS_KEY_ID="$key" \
  AWS_SECRET_ACCESS_KEY="$secret" AWS_DEFAULT_REGION=us-east-1 \
  "$aws" --endpoint-url "http://127.0.0.1:$GPUAAS_S3_PORT" s3 ls s3://work/ >"$walk/ls.txt" \
  || fail "aws s3 ls"
grep -q " x$" "$walk/ls.txt" || { cat "$walk/ls.txt"; fail "S3 does not list the notebook's x"; }
echo "nb-1 on $first wrote /data/x through the proxy; S3 lists it"

# From the workload: the control plane's services and the nodes' agents are refused (at their
# addresses: the stack's DNS is not the workload's).
address_of() {
  /usr/bin/docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' \
    "$("${compose[@]}" ps -q "$1")"
}
targets=""
for target in auth:17051 storage:17053 storage:9000 instance:17054 postgres:5432 registry:5000 \
    agent-1:17061 agent-2:17061 agent-1:9161; do
  targets+="('$(address_of "${target%:*}")', ${target#*:}), "
done
cell=$(run_cell "$(sed "s|TARGETS|[$targets]|" "$src/tests/images/reach_cell.py")") \
  || fail "the attack cell: $cell"
grep -q "reached \[\]" <<<"$cell" || fail "a workload on $first reached: $cell"
echo "from nb-1: no service, database, registry or agent reached"

"${ctl[@]}" instances stop nb-1 --wait --wait-timeout 90s >"$walk/stop.txt" 2>&1 \
  || { cat "$walk/stop.txt"; fail "stop nb-1"; }
(as_admin && "${ctl[@]}" nodes drain "$first" && "${ctl[@]}" stocks create --spec a100.1x -n 1) \
  >"$walk/drain.txt" 2>&1 || { cat "$walk/drain.txt"; fail "drain $first"; }
(as_alice && "${ctl[@]}" instances start nb-1 --wait) >"$walk/start.txt" 2>&1 \
  || { cat "$walk/start.txt"; fail "start nb-1 again"; }
second=$(node_of)
[ -n "$second" ] && [ "$second" != "$first" ] || fail "nb-1 started again on $second, not the other node"
cell=$(run_cell "print(open('/data/x').read())") || fail "jupyter on $second: $cell"
grep -q "written on $first" <<<"$cell" || fail "nb-1 on $second read: $cell"
echo "nb-1 started again on $second and read the x it wrote on $first"

# The console and the REST API, through the gateway.
curl -sf "http://127.0.0.1:$GPUAAS_GATEWAY_PORT/" | grep -qi "<html" || fail "the console's page"
curl -sf -H "Authorization: Bearer $("${ctl[@]}" token)" \
  "http://127.0.0.1:$GPUAAS_GATEWAY_PORT/v1/instances" | grep -q '"nb-1"' \
  || fail "REST: /v1/instances does not list nb-1"
echo "console and REST answer"

"${compose[@]}" down -v >"$tmp/down.log" 2>&1 || { cat "$tmp/down.log"; fail "docker-compose down -v"; }
left=$(/usr/bin/docker ps -aq --filter "label=com.docker.compose.project=$project"; \
       /usr/bin/docker volume ls -q --filter "label=com.docker.compose.project=$project")
[ -z "$left" ] || fail "down -v left: $left"
echo "down -v removed every container and volume"

#!/usr/bin/env bash
# ctest gateway_rest_api: the REST API as its users call it, with curl, on a dev stack
# (`tools/gpuaas up` on free ports, tests/devstack/stack_lib.sh):
#   - every path of the /openapi.json the gateway serves reaches its service (the document, the
#     gateway's routes and the services cannot drift apart);
#   - the seeds' requests as written (POST/DELETE /stocks, POST /gpu-instances, GET and DELETE
#     /gpu-instances/{id}, /storages and their accessors) beside the /v1 paths;
#   - errors as google.rpc.Status bodies naming the field; server-sent events for watch and logs.
# The attacks on the gateway are tests/security/gateway_attack.sh.
#   rest_api.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=../devstack/stack_lib.sh
source "$src/tests/devstack/stack_lib.sh"
start_stack "$tmp/up.log"
grep -q "console   http://127.0.0.1:$GPUAAS_GATEWAY_PORT/" "$tmp/up.log" || fail "up printed no console URL: $(cat "$tmp/up.log")"

# shellcheck source=rest_lib.sh
source "$src/tests/gateway/rest_lib.sh"
echo "== every path of /openapi.json reaches its service"
call GET /openapi.json
expect 200 "GET /openapi.json"
echo "$body" >"$tmp/openapi.json"
paths=0
while IFS=$'\t' read -r method path; do
  concrete=$(sed -E 's/\{[^}]+\}/x-1/g' <<<"$path")
  m=${method^^}
  data=""
  [ "$m" = POST ] || [ "$m" = PATCH ] || [ "$m" = PUT ] && data='{}'
  # No token: a service answers (401 for most, something of its own for login and the JWKS);
  # a path the gateway does not serve would be its own 404 or 405, a method the service lacks
  # a 501 (UNIMPLEMENTED), a service the gateway cannot reach its 503 (UNAVAILABLE) or 504:
  # no service answers an unauthenticated call with a 5xx.
  call "$m" "$concrete" "$data" --max-time 5
  case $status in
    405 | 5??) fail "$m $path: $status $body" ;;
    404) grep -q "no such page or API path" <<<"$body" && fail "$m $path: not routed: $body" ;;
  esac
  jq -e '.code != null or (type == "object")' <<<"$body" >/dev/null 2>&1 \
    || [ "$status" = 200 ] || fail "$m $path: not a JSON answer: $body"
  paths=$((paths + 1))
done < <(jq -r '.paths | to_entries[] | .key as $p | .value | keys[] | [., $p] | @tsv' "$tmp/openapi.json")
[ "$paths" -gt 60 ] || fail "only $paths operations in /openapi.json"
echo "   $paths operations answered"

echo "== an operator: the seeds' stock requests"
call POST /v1/auth:login "{\"user_name\": \"admin\", \"password\": \"$(cat "$state/admin-password")\"}"
expect 200 "admin login"
token=$(field .access_token)
# As the seed's operator API writes them (docs/seed-api.md): Go's spellings, resource.Quantity
# strings (and a number, which a Quantity may be written as).
seed_stocks='{"number": 2, "operationID": "rest-op-1", "specName": "t4.1x", "cpu": "4", "memory": "16Gi", "gpuType": "T4", "gpuNum": 1}'
call POST /stocks "$seed_stocks"
expect 200 "POST /stocks"
[ "$(field .placed)" = 2 ] || fail "POST /stocks placed $(field .placed)"
call POST /stocks "$seed_stocks"
[ "$(field '.stocks | length')" = 2 ] || fail "a retried POST /stocks is not the first answer: $body"
call POST /stocks '{"number": 1, "operationID": "rest-op-1b", "specName": "t4.1x", "cpu": 4, "memory": "16384Mi"}'
expect 200 "POST /stocks with the quantities written otherwise"
call DELETE /stocks '{"number": 1, "operationID": "rest-op-1c", "specName": "t4.1x"}'
expect 200 "DELETE /stocks as the seed writes it"
call GET /v1/stocks:summary
[ "$(jq -r '.counts[] | select(.spec_name == "t4.1x") | .available' <<<"$body")" = 2 ] \
  || fail "summary after POST /stocks: $body"
call DELETE /stocks '{"spec_name": "t4.1x", "number": 1, "operation_id": "rest-op-2"}'
expect 200 "DELETE /stocks in the proto's names"
call POST /stocks '{"spec_name": "t4.1x", "number": 1, "operation_id": "rest-op-3", "gpu_num": 2}'
expect 400 "POST /stocks with another spec's gpu_num"
[ "$(field .code)" = 3 ] || fail "error body: $body"
grep -q gpu_num <<<"$(field .message)" || fail "the error names no field: $body"

echo "== a tenant and its people"
make_tenant studio-a alice alice-password-1
call POST /v1/images '{"image": {"name": "http-demo", "version": "1", "command": "exec python3 -m http.server \"$GPUAAS_PORT_8080\" --directory /data", "defaults": {"ports": [{"port": 8080, "is_probe": true}], "volumes": [{"name": "data", "mount_path": "/data"}]}}}'
expect 200 "POST /v1/images"
call GET /v1/images/http-demo:1
expect 200 "GET /v1/images/{image} with its documented name:version"
[ "$(field .version)" = 1 ] || fail "GET /v1/images/http-demo:1: $body"
admin=$token
token=$(login alice alice-password-1)
call GET /v1/auth:whoami
[ "$(field .tenant_id)" = studio-a ] || fail "alice acts for $(field .tenant_id)"

echo "== the seeds' storage and accessor requests"
call POST /storages '{"storage_id": "models", "spec_name": "standard-10g", "name": "SD models"}'
expect 200 "POST /storages"
call GET /storages/models
expect 200 "GET /storages/models"
[ "$(field .storage_id)" = models ] || fail "GET /storages/models: $body"
call POST /storages/models/accessors '{"ttl": "3600s", "description": "rest test"}'
expect 200 "POST /storages/models/accessors"
key=$(field .access_key_id)
[ -n "$(field .secret_access_key)" ] || fail "no secret in the create answer"
call GET /storages/models/accessors
grep -q "$key" <<<"$body" || fail "the accessor is not listed: $body"
grep -q secret_access_key <<<"$body" && fail "a list shows the secret: $body"

echo "== the seeds' instance requests"
call POST /gpu-instances '{
  "instanceID": "web-1",
  "tenantID": "studio-a",
  "tenantName": "Studio A",
  "image": "http-demo",
  "storageID": "models",
  "specName": "t4.1x",
  "template": {
    "ports": [{"port": 8080, "protocol": "TCP", "isPublic": false, "isProbe": true, "baseUrl": "/"}],
    "envs": [{"name": "GREETING", "value": "hello"}],
    "cmd": "exec python3 -m http.server \"$GPUAAS_PORT_8080\" --directory /data",
    "volumes": [{"name": "data", "mountPath": "/data", "readOnly": false}]
  }
}'
expect 200 "POST /gpu-instances as the seed writes it"
[ "$(field .state)" = init ] || fail "create answered $(field .state), not the seed's init"
call POST /gpu-instances '{"instanceID": "udp-1", "specName": "t4.1x", "template": {"ports": [{"port": 53, "protocol": "UDP"}]}}'
expect 400 "a UDP port"
grep -q "template.ports\[0\].protocol" <<<"$(field .message)" || fail "the UDP error names no field: $body"
# The watch stream sees it converge, as server-sent events.
curl -s -N --max-time 60 -H "Authorization: Bearer $token" "$api/v1/instances:watch" >"$tmp/watch.txt" &
watch=$!
pids+=("$watch")
for _ in $(seq 1 120); do
  call GET /gpu-instances/web-1
  [ "$(field .state)" = running ] && break
  [ "$(field .state)" = failed ] && fail "web-1 failed: $body"
  sleep 0.5
done
[ "$(field .state)" = running ] || fail "web-1 is not the seed's running: $body"
call GET /v1/instances/web-1
[ "$(field .state)" = STATE_RUNNING ] || fail "/v1 does not keep its state names: $body"
sleep 1
kill "$watch" 2>/dev/null || true
grep -q '^data: {' "$tmp/watch.txt" || fail "the watch sent no events: $(head -c 500 "$tmp/watch.txt")"
grep -q 'STATE_RUNNING' "$tmp/watch.txt" || fail "the watch never said RUNNING: $(head -c 2000 "$tmp/watch.txt")"
# Logs as events (the stream ends with the log when not following).
logs=$(curl -s --max-time 30 -H "Authorization: Bearer $token" "$api/v1/instances/web-1/logs")
grep -q '^data: ' <<<"$logs" || fail "logs came as no events: $logs"

call POST /v1/instances/web-1:stop '{}'
expect 200 "stop web-1"
echo "== stop, usage, delete"
for _ in $(seq 1 60); do
  call GET /gpu-instances/web-1
  [ "$(field .state)" = stopped ] && break
  sleep 0.5
done
[ "$(field .state)" = stopped ] || fail "web-1 did not stop: $body"
call GET "/v1/usage?instance_id=web-1"
expect 200 "GET /v1/usage"
[ "$(field '.records | length')" -ge 1 ] 2>/dev/null || [ "$(field '.usage | length')" -ge 1 ] \
  || fail "no usage for web-1: $body"
call DELETE /gpu-instances/web-1
expect 200 "DELETE /gpu-instances/web-1"
call DELETE "/storages/models/accessors/$key"
expect 200 "DELETE the accessor"
token=$admin
call GET /v1/nodes
[ "$(field '.nodes | length')" = 3 ] || fail "GET /v1/nodes: $body"
echo "PASS"

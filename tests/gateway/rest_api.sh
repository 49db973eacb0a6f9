#!/usr/bin/env bash
# ctest gateway_rest_api: the REST API as its users call it, with curl, on a dev stack
# (`tools/gpuaas up` on free ports, tests/devstack/stack_lib.sh):
#   - every path of the /openapi.json the gateway serves reaches its service (the document, the
#     gateway's routes and the services cannot drift apart);
#   - the seeds' requests as written (POST/DELETE /stocks, POST /gpu-instances, GET and DELETE
#     /gpu-instances/{id}, /storages and their accessors) beside the /v1 paths;
#   - errors as google.rpc.Status bodies naming the field; server-sent events for watch and logs;
#   - another tenant's ids are 404; the console's cookie does nothing from another site or
#     without its CSRF token.
#   rest_api.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=../devstack/stack_lib.sh
source "$src/tests/devstack/stack_lib.sh"
start_stack "$tmp/up.log"
api=http://127.0.0.1:$GPUAAS_GATEWAY_PORT
grep -q "console   $api/" "$tmp/up.log" || fail "up printed no console URL: $(cat "$tmp/up.log")"

# call METHOD PATH [BODY] [curl args...]: the answer's body in $body, its status in $status.
token=""
call() {
  local method=$1 path=$2 data=${3:-}
  shift 3 || shift $#
  local auth=()
  [ -n "$token" ] && auth=(-H "Authorization: Bearer $token")
  local out
  out=$(curl -s --max-time 30 -X "$method" "${auth[@]}" ${data:+-H 'Content-Type: application/json' --data "$data"} \
        -w '\n%{http_code}' "$@" "$api$path")
  status=${out##*$'\n'}
  body=${out%$'\n'*}
}
expect() {  # expect STATUS WHAT
  [ "$status" = "$1" ] || fail "$2: want HTTP $1, got $status: $body"
}
field() { jq -r "$1" <<<"$body"; }

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
  # a 501 (UNIMPLEMENTED).
  call "$m" "$concrete" "$data" --max-time 5
  case $status in
    405 | 501) fail "$m $path: $status $body" ;;
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
call POST /stocks '{"spec_name": "t4.1x", "number": 2, "operation_id": "rest-op-1", "gpu_type": "T4", "gpu_num": 1}'
expect 200 "POST /stocks"
[ "$(field .placed)" = 2 ] || fail "POST /stocks placed $(field .placed)"
call POST /stocks '{"spec_name": "t4.1x", "number": 2, "operation_id": "rest-op-1", "gpu_type": "T4", "gpu_num": 1}'
[ "$(field '.stocks | length')" = 2 ] || fail "a retried POST /stocks is not the first answer: $body"
call GET /v1/stocks:summary
[ "$(jq -r '.counts[] | select(.spec_name == "t4.1x") | .available' <<<"$body")" = 2 ] \
  || fail "summary after POST /stocks: $body"
call DELETE /stocks '{"spec_name": "t4.1x", "number": 1, "operation_id": "rest-op-2"}'
expect 200 "DELETE /stocks"
call POST /stocks '{"spec_name": "t4.1x", "number": 1, "operation_id": "rest-op-3", "gpu_num": 2}'
expect 400 "POST /stocks with another spec's gpu_num"
[ "$(field .code)" = 3 ] || fail "error body: $body"
grep -q gpu_num <<<"$(field .message)" || fail "the error names no field: $body"

echo "== a tenant and its people"
call POST /v1/tenants '{"tenant": {"tenant_id": "studio-a", "quota": {"max_gpus": "4", "max_instances": "4", "max_storage_bytes": "107374182400"}}}'
expect 200 "POST /v1/tenants"
call POST /v1/tenants '{"tenant": {"tenant_id": "studio-b", "quota": {"max_gpus": "4", "max_instances": "4", "max_storage_bytes": "107374182400"}}}'
expect 200 "POST /v1/tenants (b)"
call POST /v1/users '{"user": {"user_name": "alice"}, "password": "alice-password-1", "tenant_id": "studio-a", "role": "ROLE_TENANT_ADMIN"}'
expect 200 "POST /v1/users"
call POST /v1/users '{"user": {"user_name": "bob"}, "password": "bob-password-1", "tenant_id": "studio-b", "role": "ROLE_TENANT_ADMIN"}'
expect 200 "POST /v1/users (bob)"
call POST /v1/images '{"image": {"name": "http-demo", "version": "1", "command": "exec python3 -m http.server \"$GPUAAS_PORT_8080\" --directory /data", "defaults": {"ports": [{"port": 8080, "is_probe": true}], "volumes": [{"name": "data", "mount_path": "/data"}]}}}'
expect 200 "POST /v1/images"
admin=$token

call POST /v1/auth:login '{"user_name": "bob", "password": "bob-password-1"}'
bob=$(field .access_token)
call POST /v1/auth:login '{"user_name": "alice", "password": "alice-password-1"}'
expect 200 "alice login"
token=$(field .access_token)
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
call POST /gpu-instances '{"instance_id": "web-1", "spec_name": "t4.1x", "image": "http-demo", "storage_id": "models"}'
expect 200 "POST /gpu-instances"
[ "$(field .state)" = STATE_PENDING ] || fail "create answered $(field .state)"
# The watch stream sees it converge, as server-sent events.
curl -s -N --max-time 60 -H "Authorization: Bearer $token" "$api/v1/instances:watch" >"$tmp/watch.txt" &
watch=$!
pids+=("$watch")
for _ in $(seq 1 120); do
  call GET /gpu-instances/web-1
  [ "$(field .state)" = STATE_RUNNING ] && break
  [ "$(field .state)" = STATE_FAILED ] && fail "web-1 failed: $body"
  sleep 0.5
done
[ "$(field .state)" = STATE_RUNNING ] || fail "web-1 is not RUNNING: $body"
sleep 1
kill "$watch" 2>/dev/null || true
grep -q '^data: {' "$tmp/watch.txt" || fail "the watch sent no events: $(head -c 500 "$tmp/watch.txt")"
grep -q 'STATE_RUNNING' "$tmp/watch.txt" || fail "the watch never said RUNNING: $(head -c 2000 "$tmp/watch.txt")"
# Logs as events (the stream ends with the log when not following).
logs=$(curl -s --max-time 30 -H "Authorization: Bearer $token" "$api/v1/instances/web-1/logs")
grep -q '^data: ' <<<"$logs" || fail "logs came as no events: $logs"

echo "== another tenant's ids are not found"
mine=$token
token=$bob
for req in "GET /gpu-instances/web-1" "DELETE /gpu-instances/web-1" "GET /storages/models" \
           "GET /v1/instances/web-1/metrics" "GET /storages/models/accessors"; do
  read -r m p <<<"$req"
  call "$m" "$p"
  expect 404 "bob: $req"
done
call POST /v1/instances/web-1:stop '{}'
expect 404 "bob stops web-1"
logs=$(curl -s -w '%{http_code}' --max-time 30 -H "Authorization: Bearer $bob" "$api/v1/instances/web-1/logs")
[[ $logs == *404 ]] || fail "bob reads web-1's logs: $logs"
token=$mine
call GET /gpu-instances/web-1
[ "$(field .state)" = STATE_RUNNING ] || fail "web-1 after bob's attempts: $body"

echo "== the console's session: cookies, CSRF, other sites"
jar=$tmp/cookies
out=$(curl -s --max-time 30 -c "$jar" -H 'Content-Type: application/json' \
      -d '{"user_name": "alice", "password": "alice-password-1"}' -w '\n%{http_code}' "$api/api/session")
[ "${out##*$'\n'}" = 200 ] || fail "console login: $out"
grep -q gpuaas_session "$jar" || fail "no session cookie"
grep -q '#HttpOnly_127.0.0.1.*gpuaas_session' "$jar" || fail "the session cookie is not HttpOnly"
csrf=$(awk '$6 == "gpuaas_csrf" { print $7 }' "$jar")
cookie() { curl -s --max-time 30 -b "$jar" -o /dev/null -w '%{http_code}' "$@"; }
[ "$(cookie "$api/v1/instances")" = 200 ] || fail "the cookie reads nothing"
[ "$(cookie -X POST -d '{}' "$api/v1/instances/web-1:stop")" = 403 ] \
  || fail "a cookie POST without the CSRF token went through"
[ "$(cookie -X POST -d '{}' -H "X-CSRF-Token: $csrf" -H 'Origin: http://evil.example' \
      "$api/v1/instances/web-1:stop")" = 403 ] || fail "another site's POST went through"
[ "$(cookie -H 'Sec-Fetch-Site: cross-site' "$api/v1/instances")" = 403 ] \
  || fail "another site's page read the API with the cookie"
[ "$(cookie -X OPTIONS -H 'Origin: http://evil.example' \
      -H 'Access-Control-Request-Method: POST' "$api/v1/instances")" = 405 ] \
  || fail "a CORS preflight was answered"
[ "$(cookie -H 'Content-Type: application/x-www-form-urlencoded' \
      -d 'user_name=alice&password=alice-password-1' "$api/api/session")" = 400 ] \
  || fail "a form post logged in"
[ "$(cookie -X POST -d '{}' -H "X-CSRF-Token: $csrf" "$api/v1/instances/web-1:stop")" = 200 ] \
  || fail "the console's own stop failed"

echo "== stop, usage, delete"
for _ in $(seq 1 60); do
  call GET /gpu-instances/web-1
  [ "$(field .state)" = STATE_STOPPED ] && break
  sleep 0.5
done
[ "$(field .state)" = STATE_STOPPED ] || fail "web-1 did not stop: $body"
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

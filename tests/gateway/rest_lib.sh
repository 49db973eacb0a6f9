# Sourced by the gateway's curl tests after tests/devstack/stack_lib.sh and start_stack: $api is
# the gateway, and call/expect/field make and check one request.
api=http://127.0.0.1:$GPUAAS_GATEWAY_PORT

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

# login USER PASSWORD: the user's access token.
login() {
  local saved=$token
  token=""
  call POST /v1/auth:login "{\"user_name\": \"$1\", \"password\": \"$2\"}"
  expect 200 "$1 logs in"
  token=$saved
  field .access_token
}

# make_tenant TENANT USER PASSWORD: as the admin ($token), a tenant with room for a few
# instances and storages, and its tenant admin.
make_tenant() {
  call POST /v1/tenants "{\"tenant\": {\"tenant_id\": \"$1\", \"quota\": {\"max_gpus\": \"4\", \"max_instances\": \"4\", \"max_storage_bytes\": \"107374182400\"}}}"
  expect 200 "POST /v1/tenants $1"
  call POST /v1/users "{\"user\": {\"user_name\": \"$2\"}, \"password\": \"$3\", \"tenant_id\": \"$1\", \"role\": \"ROLE_TENANT_ADMIN\"}"
  expect 200 "POST /v1/users $2"
}

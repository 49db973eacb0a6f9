#!/usr/bin/env bash
# ctest gateway_attack: the REST gateway and the console's session attacked as outsiders would,
# with curl and raw sockets, on a dev stack (tests/devstack/stack_lib.sh). Each attack must fail
# and the legitimate request beside it must work. README.md's table lists them.
#   gateway_attack.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=../devstack/stack_lib.sh
source "$src/tests/devstack/stack_lib.sh"
start_stack "$tmp/up.log"

echo "== no secret of the stack on a command line, no secret file readable by others"
# What `up` made and started: each secret file is 0600, and no running process's argv (which
# every local user reads in /proc) holds a secret (tests/security/secret_files_attack.sh traces
# the short-lived ones).
for f in "$state/admin-password" "$state/demo-password" "$state/node-agents-password" \
         "$state"/*api-key "$state"/*.pgpass "$state/proxy-cookie-secret"; do
  [ -f "$f" ] || continue
  mode=$(stat -c %a "$f")
  [[ $mode == 600 || $mode == 400 ]] || fail "$f is mode $mode, readable by others"
  secret=$(head -n 1 "$f")
  secret=${secret##*:}  # a password file's password is its last field
  [ ${#secret} -ge 8 ] || fail "$f holds no secret to look for"
  for cmdline in /proc/[0-9]*/cmdline; do
    tr '\0' ' ' <"$cmdline" 2>/dev/null | grep -qF -- "$secret" \
      && fail "the secret of $f is on the command line of ${cmdline%/cmdline}"
  done
done
# shellcheck source=../gateway/rest_lib.sh
source "$src/tests/gateway/rest_lib.sh"
host=127.0.0.1:$GPUAAS_GATEWAY_PORT

token=$(login admin "$(cat "$state/admin-password")")
make_tenant studio-a alice alice-password-1
make_tenant studio-b bob bob-password-1
call POST /v1/stocks '{"spec_name": "t4.1x", "number": 1, "operation_id": "attack-op-1"}'
expect 200 "stock for the victim"
call POST /v1/images '{"image": {"name": "sleeper", "version": "1", "command": "exec python3 -m http.server \"$GPUAAS_PORT_8080\" --directory /data", "defaults": {"ports": [{"port": 8080, "is_probe": true}], "volumes": [{"name": "data", "mount_path": "/data"}]}}}'
expect 200 "an image"
alice_password=alice-password-1
alice=$(login alice "$alice_password")
bob=$(login bob bob-password-1)
token=$alice
call POST /v1/storages '{"storage_id": "vault", "spec_name": "standard-10g"}'
expect 200 "alice's storage"
call POST /v1/storages/vault/accessors '{"ttl": "3600s"}'
key=$(field .access_key_id)
call POST /v1/instances '{"instance_id": "web-a", "spec_name": "t4.1x", "image": "sleeper", "storage_id": "vault"}'
expect 200 "alice's instance"

echo "== another tenant's ids: not found, and nothing changes"
token=$bob
for req in "GET /v1/instances/web-a" "GET /gpu-instances/web-a" "DELETE /gpu-instances/web-a" \
           "GET /v1/instances/web-a/metrics" "GET /v1/storages/vault" "DELETE /v1/storages/vault" \
           "GET /v1/storages/vault/accessors" "DELETE /storages/vault/accessors/$key"; do
  read -r m p <<<"$req"
  call "$m" "$p"
  expect 404 "bob: $req"
done
for verb in stop start access; do
  call POST "/v1/instances/web-a:$verb" '{}'
  expect 404 "bob: POST web-a:$verb"
done
out=$(curl -s -w '%{http_code}' --max-time 30 -H "Authorization: Bearer $bob" "$api/v1/instances/web-a/logs")
[[ $out == *404 ]] || fail "bob reads web-a's logs: $out"
token=$alice
call GET /v1/instances/web-a
expect 200 "alice still sees web-a"
[ "$(field .desired_state)" != DESIRED_STATE_STOPPED ] || fail "bob's stop reached web-a: $body"
call GET /v1/storages/vault/accessors
grep -q "$key" <<<"$body" || fail "bob's delete reached alice's accessor: $body"

echo "== a terminal (WebSocket) into another tenant's instance, from another site, or anonymous"
# tests/security/terminal_client.py opens /v1/instances/ID/exec as a client would.
ws_url="ws://$host/v1/instances/web-a/exec"
term() { /usr/bin/python3 "$src/tests/security/terminal_client.py" "$ws_url" "$@"; }
out=$(term --keys $'echo inside$((1+1))\r')
[ "$(jq -r .status <<<"$out")" = 401 ] || fail "an anonymous terminal opened: $out"
out=$(term --token "$bob" --keys $'echo inside$((1+1))\r')
[ "$(jq -r '.texts[0].code' <<<"$out")" = 5 ] || fail "bob's terminal into web-a was not NOT_FOUND: $out"
[[ $(jq -r .output <<<"$out") != *inside2* ]] || fail "bob ran a command in web-a: $out"
term_jar=$tmp/term-cookies
curl -s --max-time 30 -c "$term_jar" -H 'Content-Type: application/json' -o /dev/null \
  -d "{\"user_name\": \"alice\", \"password\": \"$alice_password\"}" "$api/api/session"
session=$(awk '$6 == "gpuaas_session" { print $7 }' "$term_jar")
out=$(term --cookie "gpuaas_session=$session" --origin http://evil.example \
        --keys $'echo inside$((1+1))\r')
[ "$(jq -r .status <<<"$out")" = 403 ] || fail "another site's page opened alice's terminal: $out"
# A page on an instance's own host (what a tenant's workload serves through the proxy).
out=$(term --cookie "gpuaas_session=$session" --origin http://web-a-8080.gpuaas.localhost:8080 \
        --keys $'echo inside$((1+1))\r')
[ "$(jq -r .status <<<"$out")" = 403 ] || fail "a page on an instance's host opened alice's terminal: $out"
out=$(term --cookie "gpuaas_session=$session" --origin "http://$host" \
        --keys $'echo inside$((1+1)); exit 7\r')
[[ $(jq -r .output <<<"$out") == *inside2* ]] || fail "alice's own terminal showed nothing: $out"
[ "$(jq -r '.texts[-1].exit_code' <<<"$out")" = 7 ] || fail "alice's terminal lost its exit status: $out"

echo "== the console's cookie from another site, without its CSRF token, by a form"
jar=$tmp/cookies
out=$(curl -s --max-time 30 -c "$jar" -H 'Content-Type: application/json' \
      -d "{\"user_name\": \"alice\", \"password\": \"$alice_password\"}" -w '\n%{http_code}' \
      "$api/api/session")
[ "${out##*$'\n'}" = 200 ] || fail "console login: $out"
grep -q '#HttpOnly_127.0.0.1.*gpuaas_session' "$jar" || fail "the session cookie is not HttpOnly"
csrf=$(awk '$6 == "gpuaas_csrf" { print $7 }' "$jar")
cookie() { curl -s --max-time 30 -b "$jar" -o "$tmp/cookie-body" -w '%{http_code}' "$@"; }
[ "$(cookie "$api/v1/instances")" = 200 ] || fail "the cookie reads nothing"
[ "$(cookie -X POST -d '{}' "$api/v1/instances/web-a:stop")" = 403 ] \
  || fail "a cookie POST without the CSRF token went through"
[ "$(cookie -X POST -d '{}' -H "X-CSRF-Token: $(printf '%032d' 0)" "$api/v1/instances/web-a:stop")" = 403 ] \
  || fail "a made-up CSRF token went through"
[ "$(cookie -X POST -d '{}' -H "X-CSRF-Token: $csrf" -H 'Origin: http://evil.example' \
      "$api/v1/instances/web-a:stop")" = 403 ] || fail "another site's POST went through"
[ "$(cookie -H 'Sec-Fetch-Site: cross-site' "$api/v1/instances")" = 403 ] \
  || fail "another site's page read the API with the cookie"
[ "$(cookie -X DELETE -H "X-CSRF-Token: $csrf" -H 'Origin: http://evil.example' "$api/api/session")" = 403 ] \
  || fail "another site ended the session"
headers=$(curl -s -D - -o /dev/null --max-time 30 -X OPTIONS -H 'Origin: http://evil.example' \
          -H 'Access-Control-Request-Method: POST' "$api/v1/instances")
grep -qi '^access-control-allow' <<<"$headers" && fail "a CORS preflight was allowed: $headers"
[ "$(cookie -H 'Content-Type: application/x-www-form-urlencoded' \
      -d "user_name=alice&password=$alice_password" "$api/api/session")" = 400 ] \
  || fail "a form post logged in"
token=$alice
call GET /v1/instances/web-a
[ "$(field .desired_state)" != DESIRED_STATE_STOPPED ] || fail "a refused request stopped web-a"
[ "$(cookie -X POST -d '{}' -H "X-CSRF-Token: $csrf" "$api/v1/instances/web-a:stop")" = 200 ] \
  || fail "the console's own stop failed: $(cat "$tmp/cookie-body")"

echo "== the console's pages cannot be framed by another site"
headers=$(curl -s -D - -o /dev/null --max-time 30 "$api/")
grep -qi "^x-frame-options: DENY" <<<"$headers" || fail "no X-Frame-Options: $headers"
grep -qi "^content-security-policy:.*frame-ancestors 'none'" <<<"$headers" || fail "no CSP: $headers"

echo "== slow clients, held event streams and a huge body do not starve the others"
/usr/bin/python3 - "$GPUAAS_GATEWAY_PORT" "$alice" <<'PY'
import socket, sys, time
port, token = int(sys.argv[1]), sys.argv[2]

def request(src, path, headers="", body=b"", method="GET", timeout=10):
    s = socket.create_connection(("127.0.0.1", port), timeout=timeout, source_address=(src, 0))
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\n{headers}Content-Length: {len(body)}\r\n\r\n"
    s.sendall(head.encode() + body)
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    return s, int(data.split(b" ", 2)[1]) if data else 0

# Slowloris: half a head on every connection one address may hold, and more.
held = []
refused = 0
for _ in range(70):
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=("127.0.0.2", 0))
    s.sendall(b"GET /v1/instances HTTP/1.1\r\nHost: x\r\n")
    held.append(s)
time.sleep(0.5)
for s in held:
    s.settimeout(0.2)
    try:
        if s.recv(100).startswith(b"HTTP/1.1 503"):
            refused += 1
    except OSError:
        pass
assert refused >= 6, f"only {refused} of 70 half-open connections were refused past the cap"
_, code = request("127.0.0.1", "/healthz")
assert code == 200, f"a normal client got {code} while another held connections"
for s in held:
    s.close()

# Event streams: one address opens more watches than it may hold.
auth = f"Authorization: Bearer {token}\r\n"
streams, codes = [], []
for _ in range(17):
    s, code = request("127.0.0.3", "/v1/instances:watch", auth)
    streams.append(s)
    codes.append(code)
assert codes[:16] == [200] * 16, codes
assert codes[16] == 429, f"the 17th stream from one address got {codes[16]}"
s, code = request("127.0.0.4", "/v1/instances:watch", auth)
assert code == 200, f"another address's stream got {code}"
s.close()
_, code = request("127.0.0.1", "/v1/instances", auth)
assert code == 200, f"a plain call got {code} while streams were held"
for s in streams:
    s.close()

# A body past the limit is refused by its declared length, before it is read.
s = socket.create_connection(("127.0.0.1", port), timeout=10)
s.sendall(f"POST /v1/instances HTTP/1.1\r\nHost: x\r\n{auth}Content-Type: application/json\r\n"
          f"Content-Length: {5 << 20}\r\n\r\n{{".encode())
answer = s.recv(200)
assert answer.startswith(b"HTTP/1.1 413"), f"a 5 MiB body got {answer[:40]!r}"
s.close()
_, code = request("127.0.0.1", "/healthz")
assert code == 200
print("slow clients, streams and bodies: refused past their caps; others served")
PY

echo "== malformed credentials and parameters are answered, and the gateway stays up"
# gRPC aborts the process on metadata it finds illegal: a byte outside printable ASCII in the
# Authorization header took the gateway down before it was checked.
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -H $'Authorization: Bearer \xff' \
      "$api/v1/instances")" = 401 ] || fail "a non-ASCII Authorization header was not a 401"
[ "$(curl -s -o /dev/null -w '%{http_code}' --max-time 30 -H $'Cookie: gpuaas_session=\xc3\xa9' \
      "$api/api/session")" = 401 ] || fail "a non-ASCII session cookie was not a 401"
token=$alice
call GET /v1/instances/%FF
expect 400 "a path variable that is not UTF-8"
call GET "/v1/usage?start_time=2026-01-01T00:00:00Z&start_time.seconds=1"
expect 400 "a query parameter inside one given whole"
call GET /healthz
expect 200 "the gateway after the malformed requests"

echo "== no credential in the gateway's log"
log=$state/logs/gateway.log
for secret in "$alice" "$bob" "$alice_password" "$csrf" \
              "$(awk '$6 == "gpuaas_refresh" { print $7 }' "$jar")"; do
  [ -n "$secret" ] || continue
  grep -qF "$secret" "$log" && fail "a credential is in $log"
done
grep -q "POST /api/session" "$log" || fail "the gateway logged no requests"
echo "PASS"

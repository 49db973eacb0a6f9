#!/usr/bin/env bash
# ctest secret_files_attack (issue 32, "Secrets"): what a local user sees of the secrets the
# platform's tools make and hand on. Each tool runs as `tools/gpuaas up` runs it, traced with
# strace -f (every program any of them starts, however briefly, and every chmod): no secret may
# appear in any program's argv (`ps` shows argv to every user), every secret file must be 0600,
# and none may be chmod'ed after its creation (it was readable by others until then). Then the
# services themselves: their argv holds no secret, and one given a DSN with a password refuses
# to start.
#   secret_files_attack.sh SOURCE_DIR AUTH_BINARY GPUAASCTL_BINARY
set -euo pipefail
src=$1
auth_bin=$2
ctl_bin=$3

fail() { echo "FAIL: $*" >&2; exit 1; }
command -v strace >/dev/null || fail "strace is missing (tools/install-deps installs it)"
[ -r "${GPUAAS_TEST_PG_DSN_FILE:-}" ] || fail "no postgres fixture (GPUAAS_TEST_PG_DSN_FILE)"
admin_dsn=$(cat "$GPUAAS_TEST_PG_DSN_FILE")
tmp=$(mktemp -d /tmp/gpuaas-secret-files.XXXXXX)
chmod 711 "$tmp"  # postgres-owned tools may need to traverse it; files inside say for themselves
db=secret_files_$$
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  psql -X -q "$admin_dsn" -c "DROP DATABASE IF EXISTS $db" >/dev/null 2>&1 || true
  psql -X -q "$admin_dsn" -c "DROP ROLE IF EXISTS ${db}_auth" >/dev/null 2>&1 || true
  rm -rf "$tmp"
}
trap cleanup EXIT

# traced NAME CMD...: runs CMD under strace; the trace is $tmp/NAME.trace.
traced() {
  local name=$1
  shift
  # LeakSanitizer stops the world with ptrace, which a process under strace cannot take: in the
  # sanitized build every traced binary would die at exit. Their leaks are their own tests' job.
  ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    strace -f -qq -s 100000 -e trace=execve,chmod,fchmod,fchmodat -o "$tmp/$name.trace" "$@"
}
# no_secret NAME SECRET WHAT: SECRET is in no argv of trace NAME.
no_secret() {
  [ -n "$2" ] || fail "$1: the $3 is empty: the check would prove nothing"
  grep -F -- "$2" <(grep 'execve(' "$tmp/$1.trace") >/dev/null \
    && fail "$1: the $3 is on a command line: $(grep -F -- "$2" "$tmp/$1.trace" | head -n1 | cut -c1-200)"
  return 0
}
# private NAME FILE...: each FILE is 0600 (or 0400) and trace NAME never chmods it.
private() {
  local name=$1 f mode
  shift
  for f in "$@"; do
    [ -e "$f" ] || fail "$name: $f was not made"
    mode=$(stat -c %a "$f")
    [[ $mode == 600 || $mode == 400 ]] || fail "$name: $f is mode $mode, readable by others"
    grep -E "chmod(at)?\(.*[\"/]$(basename "$f")\"" "$tmp/$name.trace" \
      && fail "$name: $f was chmod'ed after it was made (readable by others until then)"
  done
  return 0
}

echo "== tools/pg-service-role: a service's database role and its password file"
psql -X -q -v ON_ERROR_STOP=1 "$admin_dsn" -c "CREATE DATABASE $db" >/dev/null
db_dsn=$(sed -E "s|/postgres\?|/$db?|" <<<"$admin_dsn")
[ "$db_dsn" != "$admin_dsn" ] || fail "cannot name database $db in $admin_dsn"
traced pg-role "$src/tools/pg-service-role" "$db_dsn" auth "${db}_auth" "$tmp/auth.pgpass"
IFS=: read -r _ _ _ _ db_password <"$tmp/auth.pgpass"
no_secret pg-role "$db_password" "role's password"
private pg-role "$tmp/auth.pgpass"
auth_dsn="$(sed -E "s|^postgresql://[^@]*@|postgresql://${db}_auth@|; s|passfile=[^&]*|passfile=$tmp/auth.pgpass|" <<<"$db_dsn")"
psql -X -q -v ON_ERROR_STOP=1 "$auth_dsn" -c 'SELECT 1' >/dev/null \
  || fail "the role cannot log in with its password file (the password was not set)"

echo "== gpuaas-auth: no secret in its argv; a password in --db-dsn is refused"
(umask 077 && head -c 18 /dev/urandom | base64 >"$tmp/admin-password")
admin_password=$(cat "$tmp/admin-password")
port=$((20000 + RANDOM % 40000))
while ss -Hltn "sport = :$port" | grep -q .; do port=$((20000 + RANDOM % 40000)); done
"$auth_bin" --listen "127.0.0.1:$port" --metrics-listen 127.0.0.1:0 --db-dsn "$auth_dsn" \
  --bootstrap-admin-password-file "$tmp/admin-password" >"$tmp/auth.log" 2>&1 &
pids+=($!)
for i in $(seq 1 100); do
  (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
  kill -0 "${pids[0]}" 2>/dev/null || { cat "$tmp/auth.log" >&2; fail "gpuaas-auth exited"; }
  [ "$i" -lt 100 ] || fail "gpuaas-auth did not serve"
  sleep 0.1
done
tr '\0' ' ' <"/proc/${pids[0]}/cmdline" | grep -F -- "$admin_password" \
  && fail "the admin password is on gpuaas-auth's command line"
tr '\0' ' ' <"/proc/${pids[0]}/cmdline" | grep -F -- "$db_password" \
  && fail "the database password is on gpuaas-auth's command line"
if out=$("$auth_bin" --listen 127.0.0.1:0 --metrics-listen 127.0.0.1:0 \
         --db-dsn "postgresql://${db}_auth:$db_password@127.0.0.1:1/$db" 2>&1); then
  fail "gpuaas-auth started with a password in --db-dsn"
fi
grep -q -- "--db-dsn: carries a password" <<<"$out" || fail "no reason given: $out"
grep -qF -- "$db_password" <<<"$out" && fail "the refusal quotes the password: $out"

echo "== tools/agent-credentials: the machines' API keys"
for role in gateway service; do
  traced "creds-$role" "$src/tools/agent-credentials" --gpuaasctl "$ctl_bin" \
    --auth-addr "127.0.0.1:$port" --admin-password-file "$tmp/admin-password" \
    --key-file "$tmp/$role-api-key" --role "$role" --password-file "$tmp/node-agents-password" \
    2>"$tmp/creds-$role.log" || { cat "$tmp/creds-$role.log" >&2; fail "agent-credentials --role $role"; }
  no_secret "creds-$role" "$admin_password" "admin password"
  no_secret "creds-$role" "$(cat "$tmp/$role-api-key")" "new API key"
  no_secret "creds-$role" "$(cut -d. -f2 "$tmp/$role-api-key")" "new API key's secret"
  private "creds-$role" "$tmp/$role-api-key"
done
no_secret creds-service "$(cat "$tmp/node-agents-password")" "node-agents user's password"
private creds-service "$tmp/node-agents-password"

echo "== tools/registry: a registry behind a login"
(umask 077 && echo "tenant:$(openssl rand -hex 16)" >"$tmp/registry-login")
registry_password=$(cut -d: -f2 "$tmp/registry-login")
# The registry runs on after `start` returns, traced: strace ends when `stop` ends it. A port
# another test took between our look and the registry's bind: another port, a few times.
for attempt in 1 2 3 4 5; do
  reg_port=$((20000 + RANDOM % 40000))
  ss -Hltn "sport = :$reg_port" | grep -q . && continue
  traced registry "$src/tools/registry" start "$tmp/registry" "$reg_port" \
    --htpasswd-file "$tmp/registry-login" >"$tmp/registry-start.log" 2>&1 &
  tracer=$!
  pids+=($tracer)
  for i in $(seq 1 300); do
    [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$reg_port/v2/")" = 401 ] && break 2
    if ! kill -0 "$tracer" 2>/dev/null; then
      grep -q "address already in use" "$tmp/registry-start.log" && continue 2
      cat "$tmp/registry-start.log" >&2
      fail "registry start"
    fi
    [ "$i" -lt 300 ] || { cat "$tmp/registry-start.log" >&2; fail "the registry did not answer"; }
    sleep 0.1
  done
done
[ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$reg_port/v2/")" = 401 ] \
  || { cat "$tmp/registry-start.log" >&2; fail "no free port for the registry in 5 tries"; }
"$src/tools/registry" stop "$tmp/registry" >/dev/null 2>&1
wait "$tracer" || true
no_secret registry "$registry_password" "registry password"
no_secret registry "$(printf '%s' "$(cat "$tmp/registry-login")" | base64 -w0)" "registry login (auth.json)"
private registry "$tmp/registry/htpasswd" "$tmp/registry/auth.json" "$tmp/registry/config.yml"

echo "== tools/gen-certs: the development PKI's keys"
traced certs "$src/tools/gen-certs" "$tmp/certs" auth client >/dev/null
private certs "$tmp/certs/ca.key" "$tmp/certs/auth.key" "$tmp/certs/client.key"

echo "secret_files_attack: OK"

#!/usr/bin/env bash
# ctest devstack_up_down_anywhere: `tools/gpuaas up` (services and simulated agents), `status`,
# `up` again, `down` and `down --purge` from a checkout whose parent is a 0700 directory at a
# path over 200 characters (as root the PostgreSQL server runs as `postgres`, which cannot enter
# it, and no unix socket path may be that long). The checkout is a copy of tools/; GPUAAS_BUILD_DIR is this build tree
# and GPUAAS_SKIP_BUILD=1, so nothing is built. Every port is a free one. Whatever happens, the
# stack is stopped and every file removed.
#   up_down_anywhere.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=stack_lib.sh
source "$(dirname "$0")/stack_lib.sh"
# A server that accepts and never answers fails its step with a message, not the whole test
# by ctest's timeout.
curl() { command curl --max-time 30 "$@"; }
# As a newcomer's `up`: with the demo tenant.
GPUAAS_DEMO=1 start_stack "$tmp/up.log"
cat "$tmp/up.log"

pgdir=$(cat "$state/pg-dir")
auth_pid=$(cat "$state/pids/auth.pid")
pg_pid=$(head -n1 "$pgdir/data/postmaster.pid")
pids+=("$auth_pid" "$pg_pid")
agent_pids=()
for node in sim-a100-1 sim-h100-1 sim-t4-1; do
  [ -f "$state/pids/agent-$node.pid" ] || fail "no agent $node after up"
  agent_pids+=("$(cat "$state/pids/agent-$node.pid")")
done
pids+=("${agent_pids[@]}")

status=$("$gpuaas" status) || { echo "$status"; fail "status exited non-zero"; }
echo "$status"
grep -Eq "^postgres +running +127\.0\.0\.1:$GPUAAS_PG_PORT$" <<<"$status" \
  || fail "status: postgres is not running on $GPUAAS_PG_PORT"
grep -Eq "^auth +pid $auth_pid +127\.0\.0\.1:$GPUAAS_AUTH_PORT +SERVING$" <<<"$status" \
  || fail "status: auth is not SERVING on $GPUAAS_AUTH_PORT"
# The agents serve whether or not the stock service takes their registration yet.
i=0
for node in sim-a100-1 sim-h100-1 sim-t4-1; do
  grep -Eq "^agent +pid ${agent_pids[$i]} +127\.0\.0\.1:$((GPUAAS_AGENT_PORT + i)) +SERVING +$node " \
    <<<"$status" || fail "status: agent $node is not SERVING on $((GPUAAS_AGENT_PORT + i))"
  i=$((i + 1))
done

# No secret where another user can read it; the cluster outside the checkout, and its own.
[ "$(stat -c %a "$state")" = 700 ] || fail "$state is mode $(stat -c %a "$state")"
[ "$(stat -c %a "$state/admin-password")" = 600 ] || fail "admin-password is not 0600"
# Each machine its own key: one per agent, the proxy's, the instance service's.
for key in agent-sim-a100-1-api-key agent-sim-h100-1-api-key agent-sim-t4-1-api-key \
    proxy-api-key service-api-key; do
  [ "$(stat -c %a "$state/$key")" = 600 ] || fail "$key is not 0600"
  [ -s "$state/$key" ] || fail "$key is empty"
done
[ "$(sort -u "$state"/agent-*-api-key | wc -l)" = 3 ] || fail "agents share an API key"
[ "$(stat -c %a "$pgdir")" = 700 ] || fail "$pgdir is mode $(stat -c %a "$pgdir")"
case "$pgdir" in "$checkout"/*) fail "the cluster is inside the checkout: $pgdir" ;; esac
if [ "$(id -u)" -eq 0 ]; then
  [ "$(stat -c %U "$pgdir")" = postgres ] || fail "$pgdir is not owned by postgres"
fi

# PostgreSQL lets no role in without its password; stack.env's DSN (sourceable) and each
# service's own password file do get in, each as the service's role.
[ "$(stat -c %a "$pgdir/pgpass")" = 600 ] || fail "$pgdir/pgpass is not 0600"
! psql -X -w -Atc 'SELECT 1' "postgresql://postgres@127.0.0.1:$GPUAAS_PG_PORT/gpuaas" \
    >/dev/null 2>&1 || fail "the superuser connected without a password"
pg_dsn=$(. "$state/stack.env" && echo "$GPUAAS_PG_DSN")
[ "$(psql -X -w -Atc 'SELECT current_user' "$pg_dsn")" = postgres ] \
  || fail "stack.env's GPUAAS_PG_DSN does not connect: $pg_dsn"
for service in auth stock storage instance; do
  [ "$(stat -c %a "$state/$service.pgpass")" = 600 ] || fail "$service.pgpass is not 0600"
  ! psql -X -w -Atc 'SELECT 1' \
      "host=127.0.0.1 port=$GPUAAS_PG_PORT dbname=gpuaas user=gpuaas_$service" >/dev/null 2>&1 \
    || fail "gpuaas_$service connected without a password"
  [ "$(psql -X -w -Atc "SELECT rolsuper FROM pg_roles WHERE rolname = current_user" \
        "host=127.0.0.1 port=$GPUAAS_PG_PORT dbname=gpuaas user=gpuaas_$service passfile=$state/$service.pgpass")" = f ] \
    || fail "gpuaas_$service does not connect with its password file, or is a superuser"
done

# The demo tenant a newcomer signs in to: its admin's password 0600, two warm stocks of each
# one-GPU spec.
walk=$tmp/walk
mkdir -p "$walk/home"
ctl=(env HOME="$walk/home" XDG_CONFIG_HOME="$walk/config" "$build/tools/gpuaasctl/gpuaasctl")
grep -q "^  demo      user 'demo'" "$tmp/up.log" || fail "up printed no demo user"
[ "$(stat -c %a "$state/demo-password")" = 600 ] || fail "demo-password is not 0600"
(cd "$checkout" && "${ctl[@]}" login --user demo --password-file .gpuaas/demo-password \
  && "${ctl[@]}" instances list) >"$tmp/demo.txt" 2>&1 || { cat "$tmp/demo.txt"; fail "demo login"; }
(cd "$checkout" && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password) >/dev/null \
  || fail "admin login"
for spec in a100.1x h100.1x t4.1x; do
  [ "$(stock_of "$spec")" = 2 ] || fail "up placed $(stock_of "$spec") $spec stocks, not 2"
done

# The README's storage walk-through: a tenant with a storage quota, a storage, an accessor, and a
# round trip with the AWS CLI, rclone and a presigned link through the stack's S3 endpoint.
if [ -f "$state/pids/storage.pid" ]; then
  (cd "$checkout" \
    && "${ctl[@]}" tenants create studio-a --display-name "Studio A" --max-storage-bytes 1Ti \
    && echo "a-long-password" >"$walk/alice.pw" \
    && "${ctl[@]}" users create alice --tenant studio-a --role tenant-admin \
         --password-file "$walk/alice.pw" \
    && "${ctl[@]}" login --user alice --password-file "$walk/alice.pw" \
    && "${ctl[@]}" storages create models --spec standard-100g --name "SD models" \
    && "${ctl[@]}" accessors create models --ttl 1h) >"$walk/setup.txt" 2>&1 \
    || { cat "$walk/setup.txt"; fail "storage setup through gpuaasctl"; }
  key=$(awk '/^access key id:/{print $4}' "$walk/setup.txt")
  secret=$(awk '/^secret access key:/{print $4}' "$walk/setup.txt")
  [ -n "$key" ] && [ -n "$secret" ] || fail "accessors create printed no keys"
  endpoint=http://127.0.0.1:$GPUAAS_S3_PORT
  # Debian's AWS CLI (v2) first: a v1 CLI elsewhere on PATH presigns with SigV2.
  aws=$(command -v /usr/bin/aws aws | head -n1 || true)
  if [ -n "$aws" ] && command -v rclone >/dev/null; then
    s3env=(env -u AWS_CA_BUNDLE -u AWS_PROFILE HOME="$walk/home" AWS_CONFIG_FILE="$walk/aws-config"
           AWS_SHARED_CREDENTIALS_FILE="$walk/aws-credentials" AWS_ACCESS_KEY_ID="$key"
           AWS_SECRET_ACCESS_KEY="$secret" AWS_DEFAULT_REGION=us-east-1)
    head -c 12M /dev/urandom >"$walk/model.bin"
    mkdir -p "$walk/dataset"
    for i in $(seq 1 50); do echo "caption $i" >"$walk/dataset/img$i.txt"; done
    "${s3env[@]}" "$aws" --endpoint-url "$endpoint" s3 cp "$walk/model.bin" s3://models/checkpoints/ \
      --only-show-errors || fail "aws s3 cp up"
    "${s3env[@]}" "$aws" --endpoint-url "$endpoint" s3 sync "$walk/dataset" s3://models/dataset \
      --only-show-errors || fail "aws s3 sync"
    url=$("${s3env[@]}" "$aws" --endpoint-url "$endpoint" s3 presign \
            s3://models/checkpoints/model.bin --expires-in 600) || fail "aws s3 presign"
    curl -sSf -o "$walk/presigned.bin" "$url" || fail "curl on the presigned URL"
    cmp "$walk/model.bin" "$walk/presigned.bin" || fail "presigned download differs"
    "${s3env[@]}" RCLONE_CONFIG_GPUAAS_TYPE=s3 RCLONE_CONFIG_GPUAAS_PROVIDER=Other \
      RCLONE_CONFIG_GPUAAS_ACCESS_KEY_ID="$key" RCLONE_CONFIG_GPUAAS_SECRET_ACCESS_KEY="$secret" \
      RCLONE_CONFIG_GPUAAS_ENDPOINT="$endpoint" RCLONE_CONFIG_GPUAAS_REGION=us-east-1 \
      rclone copy gpuaas:models "$walk/back" -q || fail "rclone copy down"
    cmp "$walk/model.bin" "$walk/back/checkpoints/model.bin" || fail "rclone download differs"
    diff -r "$walk/dataset" "$walk/back/dataset" || fail "rclone dataset differs"
    (cd "$checkout" && "${ctl[@]}" storages get models) | grep -Eq "^files: +51 of" \
      || fail "storages get does not count the 51 files"
    echo "storage walk-through: aws cp/sync/presign, curl and rclone round-tripped"
    s3ok=1
  else
    echo "storage walk-through: skipped the S3 clients (aws or rclone missing)"
  fi
fi

# The README's instance walk-through: warm stock and an image (as the admin), then alice's
# instance of it on her storage, RUNNING in a sandbox on a simulated node and serving the
# storage over HTTP on its host port; stopped, its stock comes back and its usage shows.
if [ -f "$state/pids/storage.pid" ] && [ -f "$state/pids/instance.pid" ]; then
  (cd "$checkout" && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
    && "${ctl[@]}" tenants update studio-a --max-gpus 16 --max-instances 20) >"$walk/admin.txt" 2>&1 \
    || { cat "$walk/admin.txt"; fail "quota for studio-a"; }
  place_stock h100.1x 2
  (cd "$checkout" \
    && "${ctl[@]}" images create http-demo --version 1 --description "serves /data over HTTP" \
         --command 'exec python3 -m http.server "$GPUAAS_PORT_8080" --directory /data' \
         --port 8080,probe --volume data=/data \
    && "${ctl[@]}" login --user alice --password-file "$walk/alice.pw" \
    && "${ctl[@]}" instances create web-1 --spec h100.1x --image http-demo --storage models --wait \
    && "${ctl[@]}" instances get web-1 -o json >"$walk/web-1.json") >"$walk/instance.txt" 2>&1 \
    || { cat "$walk/instance.txt"; tail -n 30 "$state/logs/instance.log"; fail "instance walk-through"; }
  host_port=$(python3 -c 'import json,sys; i=json.load(open(sys.argv[1])); print(i["state"], i["node_id"], i["ports"][0]["host_port"])' "$walk/web-1.json")
  read -r istate inode host_port <<<"$host_port"
  [ "$istate" = STATE_RUNNING ] && [ "$inode" = sim-h100-1 ] \
    || fail "web-1 is $istate on $inode, want STATE_RUNNING on sim-h100-1"
  echo "hello from the storage" >"$walk/hello.txt"
  if [ "${s3ok:-0}" = 1 ]; then
    "${s3env[@]}" "$aws" --endpoint-url "$endpoint" s3 cp "$walk/hello.txt" s3://models/ \
      --only-show-errors || fail "aws s3 cp hello.txt"
  fi
  page=$(curl -sf "http://127.0.0.1:$host_port/") || fail "nothing answers on web-1's host port $host_port"
  grep -q "Directory listing for /" <<<"$page" || fail "web-1 served: $page"
  if [ "${s3ok:-0}" = 1 ]; then
    [ "$(curl -sf "http://127.0.0.1:$host_port/hello.txt")" = "hello from the storage" ] \
      || fail "web-1 does not serve the storage's hello.txt"
  fi
  (cd "$checkout" && "${ctl[@]}" instances stop web-1 --wait && "${ctl[@]}" usage --instance web-1) \
    >"$walk/stop.txt" 2>&1 || { cat "$walk/stop.txt"; fail "stop and usage"; }
  grep -q "web-1" "$walk/stop.txt" || { cat "$walk/stop.txt"; fail "usage has no record of web-1"; }
  ! curl -sf "http://127.0.0.1:$host_port/" >/dev/null || fail "web-1 still serves after stop"
  echo "instance walk-through: web-1 ran on $inode, served its storage on port $host_port, stopped, billed"

  # The catalog `up` seeded (tools/images): the walk-through's Jupyter on the same storage runs a
  # cell (tests/images/jupyter_exec.py: a kernel over the REST API, the cell over its WebSocket).
  (cd "$checkout" && "${ctl[@]}" images list) >"$walk/images.txt" 2>&1 \
    || { cat "$walk/images.txt"; fail "images list"; }
  for image in jupyter webui-demo; do
    grep -q "^$image " "$walk/images.txt" || { cat "$walk/images.txt"; fail "up did not seed $image"; }
  done
  (cd "$checkout" \
    && "${ctl[@]}" instances create nb-1 --spec h100.1x --image jupyter --storage models --wait \
    && "${ctl[@]}" instances open nb-1 >"$walk/nb-link.txt") >"$walk/nb.txt" 2>&1 \
    || { cat "$walk/nb.txt"; tail -n 30 "$state/logs/instance.log"; fail "jupyter walk-through"; }
  # Through the access proxy, as the README does: the one-time link in a browser (curl with a
  # cookie jar) lands on the notebook UI, once; a Bearer token runs a cell over the WebSocket.
  proxy=127.0.0.1:$GPUAAS_PROXY_PORT
  link=$(cat "$walk/nb-link.txt")
  [[ "$link" == "http://nb-1-8888.gpuaas.localhost:$GPUAAS_PROXY_PORT/.gpuaas/access?code="* ]] \
    || fail "instances open printed: $link"
  opened=$(curl -s -L -c "$walk/jar" -b "$walk/jar" -o "$walk/tree.html" -w "%{http_code}" \
             --resolve "nb-1-8888.gpuaas.localhost:$GPUAAS_PROXY_PORT:127.0.0.1" "$link")
  [ "$opened" = 200 ] && grep -q "<title>Home" "$walk/tree.html" \
    || fail "the link opened $opened: $(head -c 300 "$walk/tree.html")"
  again=$(curl -s -o /dev/null -w "%{http_code}" \
            --resolve "nb-1-8888.gpuaas.localhost:$GPUAAS_PROXY_PORT:127.0.0.1" "$link")
  [ "$again" = 404 ] || fail "the link's second use answered $again, want 404"
  token=$(cd "$checkout" && "${ctl[@]}" token) || fail "gpuaasctl token"
  cell=$(env -i HOME="$walk/home" /usr/bin/python3 "$src/tests/images/jupyter_exec.py" \
           --base-url "http://$proxy/" --host "nb-1-8888.gpuaas.localhost:$GPUAAS_PROXY_PORT" \
           --header "Authorization: Bearer $token" "1+1") || fail "jupyter through the proxy: $cell"
  grep -q '"result": "2"' <<<"$cell" || fail "jupyter ran 1+1 as: $cell"
  anon=$(curl -s -o /dev/null -w "%{http_code}" -H "Host: nb-1-8888.gpuaas.localhost" "http://$proxy/api/status")
  [ "$anon" = 401 ] || fail "nb-1 without credentials answered $anon, want 401"
  (cd "$checkout" && "${ctl[@]}" instances logs nb-1 --tail 50) >"$walk/nb-logs.txt" 2>&1 \
    || { cat "$walk/nb-logs.txt"; fail "instances logs nb-1"; }
  grep -q "Jupyter Server" "$walk/nb-logs.txt" || { cat "$walk/nb-logs.txt"; fail "nb-1's logs"; }
  (cd "$checkout" && "${ctl[@]}" instances metrics nb-1) >"$walk/nb-metrics.txt" 2>&1 \
    || { cat "$walk/nb-metrics.txt"; fail "instances metrics nb-1"; }
  grep -q "H100-80GB" "$walk/nb-metrics.txt" || { cat "$walk/nb-metrics.txt"; fail "nb-1's metrics"; }
  (cd "$checkout" && "${ctl[@]}" instances stop nb-1 --wait && "${ctl[@]}" usage --instance nb-1) \
    >"$walk/nb-stop.txt" 2>&1 || { cat "$walk/nb-stop.txt"; fail "stop nb-1"; }
  grep -q "nb-1" "$walk/nb-stop.txt" || { cat "$walk/nb-stop.txt"; fail "usage has no record of nb-1"; }
  stopped=$(curl -s -o /dev/null -w "%{http_code}" -H "Host: nb-1-8888.gpuaas.localhost" \
              -H "Authorization: Bearer $token" "http://$proxy/api/status")
  [ "$stopped" = 404 ] || fail "stopped nb-1 answered $stopped through the proxy, want 404"
  echo "jupyter walk-through: nb-1 opened by a one-time link, ran 1+1 = 2 through the proxy, logs, metrics, stopped, billed"
fi

# Twice is harmless: the same processes go on serving.
GPUAAS_DEMO=1 "$gpuaas" up >"$tmp/up2.log" 2>&1 || { cat "$tmp/up2.log"; fail "second up failed"; }
[ "$(cat "$state/pids/auth.pid")" = "$auth_pid" ] || fail "second up restarted auth"
[ "$(cat "$state/pids/agent-sim-t4-1.pid")" = "${agent_pids[2]}" ] || fail "second up restarted an agent"
[ "$(head -n1 "$pgdir/data/postmaster.pid")" = "$pg_pid" ] || fail "second up restarted postgres"
(cd "$checkout" && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password) >/dev/null \
  || fail "admin login after the second up"
[ "$(stock_of a100.1x)" = 2 ] || fail "second up left $(stock_of a100.1x) a100.1x stocks, not 2"

"$gpuaas" down
for pid in "$auth_pid" "$pg_pid" "${agent_pids[@]}"; do
  ! alive "$pid" || fail "process $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) still runs after down"
done
rc=0
"$checkout/tools/pg-cluster" status "$pgdir" >/dev/null 2>&1 || rc=$?
[ $rc = 3 ] || fail "pg-cluster status $pgdir: exit $rc after down, want 3 (not running)"
[ ! -e "$pgdir/data/postmaster.pid" ] || fail "postmaster.pid left in $pgdir"
if "$gpuaas" status >"$tmp/status.log" 2>&1; then
  cat "$tmp/status.log"
  fail "status exited 0 after down"
fi

"$gpuaas" down --purge
[ ! -e "$pgdir" ] || fail "down --purge left $pgdir"
[ ! -e "$state" ] || fail "down --purge left $state: $(ls -A "$state")"
echo "PASS"

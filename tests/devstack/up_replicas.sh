#!/usr/bin/env bash
# ctest devstack_up_replicas: `tools/gpuaas up --replicas 2 --tls --monitoring` (issue 25): two
# processes each of auth, stock and instance, one of storage; stack.env and every peer name both
# replicas ("a,b"), over mutual TLS (one server name checked on both replicas); Prometheus scrapes
# every replica and each one's (and each agent's) certificate expiry (issue 35). Then kill -9 the
# first replica of auth, stock and instance: gpuaasctl (through stack.env's lists) and the agents
# carry on with the second; the README's rolling restart of stock under gpuaasctl reads fails
# none; `down` stops every replica.
#   up_replicas.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=stack_lib.sh
source "$(dirname "$0")/stack_lib.sh"
start_stack "$tmp/up.log" --replicas 2 --tls --monitoring
cat "$tmp/up.log"
step=100

replicated=(auth stock instance)
ports=("$GPUAAS_AUTH_PORT" "$GPUAAS_STOCK_PORT" "$GPUAAS_INSTANCE_PORT")
status=$("$gpuaas" status) || { echo "$status"; fail "status exited non-zero"; }
echo "$status"
for i in 0 1 2; do
  name=${replicated[$i]}
  port=${ports[$i]}
  for replica in "$name" "$name-2"; do
    [ -f "$state/pids/$replica.pid" ] || fail "no $replica after up --replicas 2"
    pids+=("$(cat "$state/pids/$replica.pid")")
  done
  grep -Eq "^$name-2 +pid [0-9]+ +127\.0\.0\.1:$((port + step)) +SERVING$" <<<"$status" \
    || fail "status: $name-2 is not SERVING on $((port + step))"
  grep -qx "GPUAAS_${name^^}_ADDR=127.0.0.1:$port,127.0.0.1:$((port + step))" "$state/stack.env" \
    || fail "stack.env does not list both replicas of $name"
done
[ ! -f "$state/pids/storage-2.pid" ] || fail "storage runs twice on one data root"
# Prometheus (--monitoring) scrapes both replicas of each, and each serves its certificate's expiry.
prom=http://127.0.0.1:$GPUAAS_PROMETHEUS_PORT
pids+=("$(cat "$state/pids/prometheus.pid")")
# "job count" lines of the certificates seen, a day or more from expiry.
certs_scraped() {
  curl -fsS --data-urlencode 'query=count by (job) (gpuaas:tls_certificate_expires_in_seconds > 86400)' \
    "$prom/api/v1/query" | jq -r '.data.result[] | "\(.metric.job) \(.value[1])"' | sort >"$tmp/certs.txt"
  [ "$(grep -Ec '^(auth|stock|instance) 2$|^storage 1$|^agent 3$' "$tmp/certs.txt")" = 5 ]
}
start=$SECONDS
until certs_scraped; do
  [ $((SECONDS - start)) -lt 60 ] \
    || { cat "$tmp/certs.txt"; fail "Prometheus does not see every replica's and agent's certificate"; }
  sleep 1
done
for name in "${replicated[@]}"; do
  [ "$(curl -fsS "$prom/api/v1/targets?state=active" | jq --arg j "$name" \
    '[.data.activeTargets[] | select(.labels.job == $j and .health == "up")] | length')" = 2 ] \
    || fail "Prometheus does not scrape both replicas of $name"
done
grep -qx "GPUAAS_STORAGE_ADDR=127.0.0.1:$GPUAAS_STORAGE_PORT" "$state/stack.env" \
  || fail "stack.env: storage is not one address"
pgdir=$(cat "$state/pg-dir")

# The first replica of each dies at once; everything reaches the second.
for name in "${replicated[@]}"; do
  kill -KILL "$(cat "$state/pids/$name.pid")"
done
ctl=(env HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" "$build/tools/gpuaasctl/gpuaasctl")
(cd "$checkout" && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" specs list && "${ctl[@]}" images list && "${ctl[@]}" stocks summary) \
  >"$tmp/after-kill.txt" 2>&1 || { cat "$tmp/after-kill.txt"; fail "gpuaasctl after the kill"; }
grep -q a100.1x "$tmp/after-kill.txt" || fail "specs list after the kill lacks a100.1x"
# The agents' heartbeats reach the surviving stock replica: past the node timeout (10 s) after
# the kill every node is still READY, and stock is placed on them.
sleep 12
(cd "$checkout" && "${ctl[@]}" nodes list && "${ctl[@]}" stocks create --spec t4.1x -n 1) \
  >"$tmp/nodes.txt" 2>&1 || { cat "$tmp/nodes.txt"; fail "nodes or stocks after the kill"; }
cat "$tmp/nodes.txt"
[ "$(grep -Ec "^sim-[^ ]+ +[^ ]+ +ready " "$tmp/nodes.txt")" = 3 ] || fail "not every node is READY after the kill"
echo "after kill -9 of auth, stock and instance's first replicas: gpuaasctl, 3 agents and stock placement carry on"

# The README's rolling restart of stock while gpuaasctl reads in a loop: each replica in turn
# gets SIGTERM, `up` starts it again; no read fails.
(cd "$tmp" && "$gpuaas" up --replicas 2 --tls) >"$tmp/up-again.log" 2>&1 \
  || { cat "$tmp/up-again.log"; fail "up after the kill"; }
(cd "$checkout" && while [ ! -f "$tmp/rolled" ]; do
  "${ctl[@]}" specs list >/dev/null 2>>"$tmp/rolling-errors.txt" || echo x >>"$tmp/rolling-failed.txt"
  echo x >>"$tmp/rolling-calls.txt"
done) &
reader=$!
for replica in stock stock-2; do
  pid=$(cat "$state/pids/$replica.pid"); kill "$pid"; while kill -0 "$pid" 2>/dev/null; do sleep 0.1; done
  (cd "$tmp" && "$gpuaas" up --replicas 2 --tls) >>"$tmp/rolling.log" 2>&1 && sleep 2 \
    || { cat "$tmp/rolling.log"; fail "up during the rolling restart"; }
  pids+=("$(cat "$state/pids/$replica.pid")")
done
touch "$tmp/rolled"
wait "$reader"
[ ! -s "$tmp/rolling-failed.txt" ] || { cat "$tmp/rolling-errors.txt"; fail "gpuaasctl failed during the rolling restart"; }
echo "rolling restart of stock: $(wc -l <"$tmp/rolling-calls.txt") gpuaasctl reads, none failed"

"$gpuaas" down >"$tmp/down.log" 2>&1 || { cat "$tmp/down.log"; fail "down"; }
for pid in "${pids[@]}"; do
  alive "$pid" && fail "process $pid still runs after down"
done
echo "down stopped every replica"

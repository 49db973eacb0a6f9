#!/usr/bin/env bash
# ctest devstack_up_ha: `tools/gpuaas up --ha --monitoring` (PostgreSQL on tools/pg-ha, no
# agents), `status`, the README's hand drill (kill -9 the primary's postmaster: the standby leads,
# the services carry on without a restart, and Prometheus, scraping both Patroni nodes, fires
# GpuaasPostgresFailover), then `down --purge`, after which nothing of it runs or stays on disk. Same throwaway checkout and free ports as devstack_up_down_anywhere (stack_lib.sh).
#   up_ha.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=stack_lib.sh
source "$(dirname "$0")/stack_lib.sh"
export GPUAAS_AGENTS=0
start_stack "$tmp/up.log" --ha --monitoring
cat "$tmp/up.log"

hadir=$(sed -n 's/^.*who leads: tools\/pg-ha status \(.*\))$/\1/p' "$tmp/up.log")
[ -d "$hadir" ] || fail "up --ha named no cluster directory"
auth_pid=$(cat "$state/pids/auth.pid")
for name in auth stock instance; do
  [ -f "$state/pids/$name-2.pid" ] || fail "up --ha runs no second replica of $name"
  pids+=("$(cat "$state/pids/$name-2.pid")")
done
pids+=("$auth_pid" "$(cat "$hadir/etcd.pid")" "$(cat "$hadir/node1/patroni.pid")"
       "$(cat "$hadir/node2/patroni.pid")")
grep -q "^GPUAAS_PG_DSN='postgresql://.*,.*target_session_attrs=read-write" "$state/stack.env" \
  || fail "stack.env's GPUAAS_PG_DSN is not the multi-host DSN"
prom=http://127.0.0.1:$GPUAAS_PROMETHEUS_PORT
pids+=("$(cat "$state/pids/prometheus.pid")")
# patroni_up: Prometheus scrapes both Patroni nodes' /metrics.
patroni_up() {
  [ "$(curl -fsS "$prom/api/v1/targets?state=active" \
    | jq '[.data.activeTargets[] | select(.labels.job == "patroni" and .health == "up")] | length')" = 2 ]
}
start=$SECONDS
until patroni_up; do
  [ $((SECONDS - start)) -lt 60 ] || fail "Prometheus does not scrape both Patroni nodes"
  sleep 1
done

# Not its exit status: without agents, status reports them stopped.
status=$("$gpuaas" status) || true
echo "$status"
leader=$(grep -E '^postgres +running .* leader$' <<<"$status") || fail "status: no leader"
grep -Eq '^postgres +running .* sync_standby$' <<<"$status" || fail "status: no synchronous standby"

ctl=(env HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/config" "$build/tools/gpuaasctl/gpuaasctl")
(cd "$checkout" && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password) \
  >/dev/null || fail "admin login"
(cd "$checkout" && "${ctl[@]}" tenants create before-failover) >/dev/null \
  || fail "a write before the failover"

# The README's drill: kill -9 the leader's postmaster.
old=$(awk '{ print $4 }' <<<"$leader")
pg_pid=$("$checkout/tools/pg-ha" status "$hadir" | awk '$2 == "leader" { print $5 }')
kill -KILL "$pg_pid"
start=$SECONDS
until (cd "$checkout" && "${ctl[@]}" tenants create after-failover) >/dev/null 2>&1; do
  [ $((SECONDS - start)) -lt 60 ] || fail "no write within 60 s of killing the primary"
  sleep 0.2
done
echo "first write $((SECONDS - start)) s after kill -9 of the primary"
# The promotion raised the cluster's timeline: Prometheus says so.
until curl -fsS "$prom/api/v1/alerts" \
    | jq -e '[.data.alerts[] | select(.state == "firing" and .labels.alertname == "GpuaasPostgresFailover")] | length > 0' \
    >/dev/null; do
  [ $((SECONDS - start)) -lt 120 ] || fail "GpuaasPostgresFailover did not fire within 120 s of the kill"
  sleep 1
done
echo "GpuaasPostgresFailover firing $((SECONDS - start)) s after kill -9 of the primary"
status=$("$gpuaas" status) || true
echo "$status"
grep -Eq "^postgres +running +127\.0\.0\.1:[0-9]+ +node[12] leader$" <<<"$status" \
  && ! grep -Eq "^postgres +running +$old +.* leader$" <<<"$status" \
  || fail "status: the standby does not lead"
grep -Eq "^auth +pid $auth_pid .*SERVING$" <<<"$status" || fail "auth was restarted or is not serving"
(cd "$checkout" && "${ctl[@]}" tenants get before-failover) >/dev/null \
  || fail "the write acknowledged before the failover is gone"

"$gpuaas" down --purge
[ ! -e "$hadir" ] || fail "down --purge left $hadir"
for pid in "${pids[@]}"; do
  alive "$pid" && fail "process $pid still runs after down"
done
echo "OK"

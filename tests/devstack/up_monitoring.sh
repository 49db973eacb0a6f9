#!/usr/bin/env bash
# ctest devstack_up_monitoring: `tools/gpuaas up --monitoring` (issue 35): Debian's Prometheus
# scrapes every process of the stack (each service, the proxy, the gateway, each agent; itself)
# with tools/monitoring/rules.yml loaded. Then what the README shows: an XID injected into a
# simulated GPU, and a node's agent killed (its supervisor first, so nothing starts it again),
# each seen as a firing alert through Prometheus' HTTP API (/api/v1/alerts); `up` again brings the
# node back and the alert resolves; `down` stops Prometheus.
#   up_monitoring.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=stack_lib.sh
source "$(dirname "$0")/stack_lib.sh"
started=$SECONDS
start_stack "$tmp/up.log" --monitoring
cat "$tmp/up.log"
prom=http://127.0.0.1:$GPUAAS_PROMETHEUS_PORT
[ -f "$state/pids/prometheus.pid" ] || fail "no prometheus pid file after up --monitoring"
pids+=("$(cat "$state/pids/prometheus.pid")")
grep -qx "GPUAAS_PROMETHEUS_URL=$prom" "$state/stack.env" || fail "stack.env lacks GPUAAS_PROMETHEUS_URL"
echo "up --monitoring: $((SECONDS - started)) s"

# wait_for WHAT SECONDS COMMAND...: until COMMAND succeeds. The bound only ends a test that would
# otherwise hang; nothing here measures speed.
wait_for() {
  local what=$1 seconds=$2 deadline
  shift 2
  deadline=$((SECONDS + seconds))
  until "$@"; do
    [ $SECONDS -lt $deadline ] || fail "waited $seconds s for $what"
    sleep 1
  done
}
# The active targets as "job instance health" lines.
targets() {
  curl -fsS "$prom/api/v1/targets?state=active" \
    | jq -r '.data.activeTargets[] | "\(.labels.job) \(.labels.instance) \(.health)"' | sort
}
all_targets_up() {
  targets >"$tmp/targets.txt"
  [ "$(wc -l <"$tmp/targets.txt")" = 10 ] && ! grep -qv ' up$' "$tmp/targets.txt"
}
# firing ALERTNAME LABEL VALUE: the alert fires with that label.
firing() {
  curl -fsS "$prom/api/v1/alerts" >"$tmp/alerts.json"
  jq -e --arg a "$1" --arg l "$2" --arg v "$3" \
    '[.data.alerts[] | select(.state == "firing" and .labels.alertname == $a and .labels[$l] == $v)] | length > 0' \
    "$tmp/alerts.json" >/dev/null
}
not_firing() { ! firing "$@"; }
# query PROMQL: the first sample's value ("" when none).
query() {
  curl -fsS --data-urlencode "query=$1" "$prom/api/v1/query" | jq -r '.data.result[0].value[1] // ""'
}

# Every process of the stack: 4 services, the proxy, the gateway, 3 agents and Prometheus.
deadline=$((SECONDS + 120))
until all_targets_up; do
  [ $SECONDS -lt $deadline ] || { cat "$tmp/targets.txt"; fail "waited 120 s for every target up"; }
  sleep 1
done
cat "$tmp/targets.txt"
for job in auth stock storage instance proxy gateway prometheus; do
  grep -q "^$job 127\.0\.0\.1:[0-9]* up$" "$tmp/targets.txt" || fail "no $job target up"
done
[ "$(grep -c '^agent ' "$tmp/targets.txt")" = 3 ] || fail "not three agent targets"
grep -q "^auth 127.0.0.1:$GPUAAS_METRICS_PORT up$" "$tmp/targets.txt" \
  || fail "auth is not scraped on its metrics port $GPUAAS_METRICS_PORT"
curl -fsS "$prom/api/v1/rules" | jq -r '.data.groups[].rules[] | select(.type == "alerting") | .name' \
  | sort -u >"$tmp/rules.txt"
for alert in GpuaasNodeNotReady GpuaasGpuXidError GpuaasPostgresFailover GpuaasReplicaDown \
    GpuaasS3ServerErrors GpuaasInstancesPendingTooLong GpuaasCertificateExpiresSoon; do
  grep -qx "$alert" "$tmp/rules.txt" || fail "rule $alert is not loaded"
done
# The new series, as the services serve them.
# A function, so each try queries again (a $(query) argument would be read once, at the call).
t4_ready() { [ "$(query 'gpuaas:node_ready:max{node="sim-t4-1"}')" = 1 ]; }
wait_for "the nodes' readiness" 120 t4_ready
[ "$(query 'count(DCGM_FI_DEV_GPU_UTIL)')" = 20 ] || fail "not 20 GPUs' DCGM series"
[ "$(query 'sum(gpuaas_instance_instances)')" != "" ] || fail "no gpuaas_instance_instances"
status=$("$gpuaas" status) || { echo "$status"; fail "status exited non-zero"; }
echo "$status"
grep -Eq "^prometheus +pid [0-9]+ +127\.0\.0\.1:$GPUAAS_PROMETHEUS_PORT +SERVING +\(targets up: 10/10" <<<"$status" \
  || fail "status: prometheus is not SERVING with 10 targets up"
echo "every process scraped, every rule loaded: $((SECONDS - started)) s"

# An XID on GPU 1 of sim-a100-1 (the fault file raises it at each poll while the line is there).
echo "1 79" >"$state/faults/sim-a100-1"
wait_for "GpuaasGpuXidError" 60 firing GpuaasGpuXidError Hostname sim-a100-1
jq '.data.alerts[] | select(.labels.alertname == "GpuaasGpuXidError")' "$tmp/alerts.json"
: >"$state/faults/sim-a100-1"
echo "XID alert firing: $((SECONDS - started)) s"

# sim-t4-1's agent dies and stays dead: its supervisor first, then the agent.
killed=$SECONDS
kill -KILL "$(cat "$state/pids/agent-sim-t4-1.pid")"
kill -KILL "$(cat "$state/pids/agent-sim-t4-1.child")"
wait_for "GpuaasNodeNotReady for sim-t4-1" 120 firing GpuaasNodeNotReady node sim-t4-1
echo "GpuaasNodeNotReady firing $((SECONDS - killed)) s after the kill"
wait_for "GpuaasAgentDown" 120 firing GpuaasAgentDown node sim-t4-1
echo "GpuaasAgentDown firing $((SECONDS - killed)) s after the kill"
jq '[.data.alerts[] | select(.state == "firing") | {alertname: .labels.alertname, labels: .labels, summary: .annotations.summary, activeAt}]' \
  "$tmp/alerts.json"
not_firing GpuaasNodeNotReady node sim-a100-1 || fail "GpuaasNodeNotReady fires for sim-a100-1 too"
status=$("$gpuaas" status) && fail "status exited 0 with an agent dead"
grep -E '^prometheus ' <<<"$status"
grep -Eq '^prometheus .*firing: .*GpuaasNodeNotReady' <<<"$status" || fail "status does not show the alert"

# `up` again starts the agent (and keeps Prometheus, reloading its config); the alert resolves.
(cd "$tmp" && "$gpuaas" up) >"$tmp/up-again.log" 2>&1 || { cat "$tmp/up-again.log"; fail "up again"; }
[ "$(cat "$state/pids/prometheus.pid")" = "${pids[0]}" ] || fail "up again restarted Prometheus"
wait_for "GpuaasNodeNotReady to resolve" 120 not_firing GpuaasNodeNotReady node sim-t4-1
echo "node back, alert resolved: $((SECONDS - started)) s"

"$gpuaas" down >"$tmp/down.log" 2>&1 || { cat "$tmp/down.log"; fail "down"; }
alive "${pids[0]}" && fail "prometheus still runs after down"
listening "$GPUAAS_PROMETHEUS_PORT" && fail "port $GPUAAS_PROMETHEUS_PORT still listens after down"
[ ! -f "$state/monitoring" ] || fail "down left .gpuaas/monitoring"
echo "down stopped prometheus; $((SECONDS - started)) s in all"

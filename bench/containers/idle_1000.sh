#!/usr/bin/env bash
# Issue 23's budget "1,000 idle containers on one node under 5 % of a core for the agent",
# through the whole dev stack (bench/containers/stack.sh: one simulated 8×A100 node, OCI
# containers under runc, veth networks): starts COUNT (1,000) instances of the catalog's `tiny`
# image (busybox httpd, probed on 8080) at RATE per second (5), then over WINDOW seconds (60)
# of rest reads the agent's CPU (utime + stime of /proc/<pid>/stat), then memory per container
# (the shims' and the workloads' PSS; the node's used memory before and after, the rest being
# the kernel's: mounts, namespaces, veths, cgroups), then deletes them all and times until the
# last shim is gone and until the veth links are.
#
#   bench/containers/idle_1000.sh [build-dir]        (default build-dir: build)
set -euo pipefail
BUILD=$(realpath "${1:-build}")
COUNT=${COUNT:-1000}
RATE=${RATE:-5}
WINDOW=${WINDOW:-60}
# 1,000 slots on the node's eight A100s (a 125th each).
export SHARE_MILLI=${SHARE_MILLI:-8} STOCKS=${STOCKS:-$COUNT}
# shellcheck source=bench/containers/stack.sh
. "$(dirname "${BASH_SOURCE[0]}")/stack.sh"
HZ=$(getconf CLK_TCK)
used_kb() { awk '/^MemTotal/ {t = $2} /^MemAvailable/ {a = $2} END {print t - a}' /proc/meminfo; }
# This node's shims (other stacks may run on the machine too) and their children (the workloads).
shim_pids() { pgrep -f "^$BUILD/services/agent/gpuaas-workload-shim --dir [^ ]*/workloads/$NODE/" || true; }
shims() { shim_pids | wc -l; }
# pss_kb PID...: their summed PSS.
pss_kb() {
  local sum=0 p
  for p in "$@"; do
    sum=$((sum + $(awk '/^Pss:/ {print $2}' "/proc/$p/smaps_rollup" 2>/dev/null || echo 0)))
  done
  echo "$sum"
}
gpw_links() { ip -br link 2>/dev/null | grep -c '^gpw' || true; }
gpw0=$(gpw_links)
echo "load before the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
"$BUILD/bench/instance/instance_start_bench" --spec bench.share --tenant bench --image tiny \
  --count 1 --rate 0 --prefix pull --timeout 120
sync
mem0=$(used_kb)
a0=$(ticks "$AGENT_PID") s0=$(date +%s.%N)
"$BUILD/bench/instance/instance_start_bench" --spec bench.share --tenant bench --image tiny \
  --count "$COUNT" --rate "$RATE" --prefix idle --keep --timeout 600 || true
a1=$(ticks "$AGENT_PID") s1=$(date +%s.%N)
running=$(ctl instances list --tenant bench --state running --all | grep -c ' running ' || true)
awk -v n="$running" -v t="$(echo "$s0 $s1" | awk '{print $2 - $1}')" -v a=$((a1 - a0)) -v hz="$HZ" \
  'BEGIN { printf "start          %d RUNNING in %.0f s; the agent used %.1f core-s (%.1f ms a start)\n", n, t, a / hz, 1000 * a / hz / n }'
sleep 10  # the last starts' reports settle
a0=$(ticks "$AGENT_PID")
sleep "$WINDOW"
a1=$(ticks "$AGENT_PID")
awk -v n="$running" -v a=$((a1 - a0)) -v hz="$HZ" -v w="$WINDOW" \
  'BEGIN { printf "idle           %d containers; over %d s the agent used %.2f %% of a core\n", n, w, 100 * a / hz / w }'
sync
mem1=$(used_kb)
mapfile -t pids < <(shim_pids)
shim=$(pss_kb "${pids[@]}")
httpd=$(pss_kb $(for p in "${pids[@]}"; do pgrep -P "$p"; done))
awk -v n="$running" -v m=$((mem1 - mem0)) -v s="$shim" -v h="$httpd" -v c="$(shims)" \
  'BEGIN { printf "memory         %.0f MB more in use for %d containers: %.2f MB each, of which shim PSS %.2f MB (%d shims), workload PSS %.2f MB, the rest (kernel, runc state) %.2f MB\n",
           m / 1024, n, m / 1024 / n, s / 1024 / n, c, h / 1024 / n, (m - s - h) / 1024 / n }'
ids=$(ctl instances list --tenant bench --all -o json \
        | python3 -c 'import json,sys; print("\n".join(i["instance_id"] for i in json.load(sys.stdin)["instances"]))')
s0=$(date +%s.%N) a0=$(ticks "$AGENT_PID")
echo "$ids" | XDG_CONFIG_HOME=$home xargs -P 4 -n 50 \
  sh -c 'for i; do "$0" instances delete "$i" >/dev/null; done' "$BUILD/tools/gpuaasctl/gpuaasctl" \
  || true
until [ "$(shims)" = 0 ]; do sleep 0.2; done
s1=$(date +%s.%N) a1=$(ticks "$AGENT_PID")
awk -v t="$(echo "$s0 $s1" | awk '{print $2 - $1}')" -v a=$((a1 - a0)) -v hz="$HZ" \
  'BEGIN { printf "stop           every shim gone %.0f s after the first delete; the agent used %.1f core-s\n", t, a / hz }'
# Then the networks (veth links) go, LINK_WAIT (300) seconds at most.
for _ in $(seq 1 $((${LINK_WAIT:-300} * 5))); do
  [ "$(gpw_links)" -le "$gpw0" ] && break
  sleep 0.2
done
s2=$(date +%s.%N)
awk -v t="$(echo "$s0 $s2" | awk '{print $2 - $1}')" -v left=$(($(gpw_links) - gpw0)) \
  'BEGIN { printf "networks       %d veth links of ours left %.0f s after the first delete\n", left, t }'

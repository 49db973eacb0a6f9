#!/usr/bin/env bash
# ctest devstack_up_nodes: `tools/gpuaas up --nodes 3 --storage ceph` (issue 34): three agents,
# each a host of its own (tools/node-host) on a bridge of the test's own, the control plane at
# the bridge's address. A node sees nothing of the control plane's files and nothing on this
# machine's loopback. The README's walk-through across hosts: Jupyter on node A through the
# proxy writes /data/x on Ceph, S3 lists it; she stops it, node A is drained, and the next start
# lands on another node, where the notebook reads x; from there it reaches nothing of the control
# plane or of any node (an attack). That node dies (node-host kill): within the node timeout the
# instance runs on another node and reads x, nothing stays claimed on the dead one, and `up`
# brings it back READY. Then a partition: the node running it is cut off the bridge; the
# instance runs again elsewhere, and when the link is back the node ends the old run. `down`
# leaves no node, bridge or mount.
#   up_nodes.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=stack_lib.sh
source "$(dirname "$0")/stack_lib.sh"
# A /24 and a bridge nothing else here uses (devstack tests run side by side).
for n in $(shuf -i 1-250); do
  ip -4 -o addr | grep -q " 10\.214\.$n\." || break
done
export GPUAAS_NODE_NET=10.214.$n GPUAAS_NODE_BRIDGE=gpun$n
cp=$GPUAAS_NODE_NET.1
# Three nodes of one kind, so an instance can move between them.
export GPUAAS_SIM_AGENTS="node-a 2xT4;node-b 2xT4;node-c 2xT4"
start_stack "$tmp/up.log" --storage ceph --nodes 3
cat "$tmp/up.log"

status=$("$gpuaas" status) || { echo "$status"; fail "status exited non-zero"; }
echo "$status"
for k in 1 2 3; do
  grep -Eq "^agent +pid [0-9]+ +$GPUAAS_NODE_NET\.$((10 + k)):$GPUAAS_AGENT_PORT +SERVING .*a host of its own" \
    <<<"$status" || fail "status: node $k is not SERVING at $GPUAAS_NODE_NET.$((10 + k))"
done
grep -qx "GPUAAS_AUTH_ADDR=$cp:$GPUAAS_AUTH_PORT" "$state/stack.env" \
  || fail "stack.env does not name auth at the control plane's address"
node_a_dir=$(dirname "$(readlink "$state/logs/agent-node-a.log")")
in_node() { "$checkout/tools/node-host" exec "$1" -- "${@:2}"; }
in_node "$node_a_dir" test -e "$state/admin-password" && fail "a node sees the state directory"
in_node "$node_a_dir" test -e "$state/ceph/ceph.client.admin.keyring" \
  && fail "a node sees Ceph's admin keyring"
in_node "$node_a_dir" curl -s -m 2 "http://127.0.0.1:$GPUAAS_PROXY_PORT/" \
  && fail "a node reached this machine's loopback"
[ "$(in_node "$node_a_dir" hostname)" = node-a ] || fail "node-a's host name"
echo "three nodes as hosts of their own; node-a sees none of the control plane's files"

walk=$tmp/walk
mkdir -p "$walk/home"
ctl=(env HOME="$walk/home" XDG_CONFIG_HOME="$walk/config" "$build/tools/gpuaasctl/gpuaasctl")
(cd "$checkout" \
  && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" tenants create studio-a --max-gpus 16 --max-instances 20 --max-storage-bytes 1Ti \
  && echo "a-long-password" >"$walk/alice.pw" \
  && "${ctl[@]}" users create alice --tenant studio-a --role tenant-admin \
       --password-file "$walk/alice.pw") >"$walk/setup.txt" 2>&1 \
  || { cat "$walk/setup.txt"; fail "setup through gpuaasctl"; }
place_stock t4.1x 1
(cd "$checkout" \
  && "${ctl[@]}" login --user alice --password-file "$walk/alice.pw" \
  && "${ctl[@]}" storages create work --spec ceph-10g \
  && "${ctl[@]}" accessors create work --ttl 1h) >"$walk/alice.txt" 2>&1 \
  || { cat "$walk/alice.txt"; fail "alice's storage"; }
s3_as_accessor "$walk/alice.txt"

# run_cell CODE: the cell's output, run in nb-1's Jupyter through the proxy on this machine.
run_cell() {
  local token
  token=$(cd "$checkout" && "${ctl[@]}" token) || fail "gpuaasctl token"
  env -i HOME="$walk/home" /usr/bin/python3 "$src/tests/images/jupyter_exec.py" \
    --base-url "http://127.0.0.1:$GPUAAS_PROXY_PORT/" \
    --host "nb-1-8888.gpuaas.localhost:$GPUAAS_PROXY_PORT" \
    --header "Authorization: Bearer $token" "$1"
}
node_of() { (cd "$checkout" && "${ctl[@]}" instances get nb-1) | awk '$1 == "NODE:" { print $2 }'; }
# moved_from NODE: waits up to 2 minutes for nb-1 RUNNING on a node other than NODE, and prints
# that node.
moved_from() {
  local node
  for _ in $(seq 1 240); do
    node=$(node_of)
    if [ -n "$node" ] && [ "$node" != "$1" ] \
        && (cd "$checkout" && "${ctl[@]}" instances get nb-1) | grep -q "^STATE: *running"; then
      echo "$node"
      return 0
    fi
    sleep 0.5
  done
  return 1
}

(cd "$checkout" \
  && "${ctl[@]}" instances create nb-1 --spec t4.1x --image jupyter --storage work --wait) \
  >"$walk/nb.txt" 2>&1 || { cat "$walk/nb.txt"; fail "jupyter on a node"; }
first=$(node_of)
grep -q "ENDPOINT: .*-> $GPUAAS_NODE_NET\.1[1-3]:" "$walk/nb.txt" \
  || { cat "$walk/nb.txt"; fail "nb-1's endpoint is not its node's address"; }
cell=$(run_cell "open('/data/x', 'w').write('written on $first'); 1+1") \
  || fail "jupyter through the proxy: $cell"
grep -q '"result": "2"' <<<"$cell" || fail "jupyter ran the cell as: $cell"
"${s3[@]}" s3 ls s3://work/ >"$walk/ls.txt" || fail "aws s3 ls"
grep -q " x$" "$walk/ls.txt" || { cat "$walk/ls.txt"; fail "S3 does not list the notebook's x"; }
echo "nb-1 on $first wrote /data/x through the proxy; S3 lists it"

# Stopped, its node drained: the next start lands on another node, with the same storage.
(cd "$checkout" && "${ctl[@]}" instances stop nb-1 --wait --wait-timeout 90s) >"$walk/stop.txt" 2>&1 \
  || { cat "$walk/stop.txt"; fail "stop nb-1"; }
(cd "$checkout" && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" nodes drain "$first") >"$walk/drain.txt" 2>&1 \
  || { cat "$walk/drain.txt"; fail "drain $first"; }
place_stock t4.1x 1
(cd "$checkout" && "${ctl[@]}" login --user alice --password-file "$walk/alice.pw" \
  && "${ctl[@]}" instances start nb-1 --wait) >"$walk/start.txt" 2>&1 \
  || { cat "$walk/start.txt"; fail "start nb-1 again"; }
second=$(node_of)
[ -n "$second" ] && [ "$second" != "$first" ] || fail "nb-1 started again on $second, not another node"
cell=$(run_cell "print(open('/data/x').read())") || fail "jupyter on $second: $cell"
grep -q "written on $first" <<<"$cell" || fail "nb-1 on $second read: $cell"
echo "nb-1 started again on $second and read the x it wrote on $first"

# Attacks from the workload on the second node: the control plane's services, registry and
# Ceph, the first node's agent and its own node's are all refused (egress to private ranges and
# every new connection to its node are the agent's rules, now across hosts).
targets="('$cp', $GPUAAS_AUTH_PORT), ('$cp', $GPUAAS_STORAGE_PORT), ('$cp', $GPUAAS_REGISTRY_PORT),"
targets+=" ('$cp', $GPUAAS_CEPH_PORT), ('$GPUAAS_NODE_NET.11', $GPUAAS_AGENT_PORT),"
targets+=" ('$GPUAAS_NODE_NET.12', $GPUAAS_AGENT_PORT), ('$GPUAAS_NODE_NET.13', $GPUAAS_AGENT_PORT)"
cell=$(run_cell "$(sed "s|TARGETS|[$targets]|" "$src/tests/images/reach_cell.py")") \
  || fail "the attack cell: $cell"
grep -q "reached \[\]" <<<"$cell" || fail "a workload on $second reached: $cell"
echo "from nb-1 on $second: no service, registry, Ceph or agent of another host reached"

# A node's loss: the node running nb-1 dies with everything on it (node-host kill, a power
# cut). Within the instance service's node timeout (30 s) and a start, nb-1 runs again on a
# node with spare stock, with its storage; nothing stays claimed on the dead node. When the node
# comes back (`up` starts what is missing), it is READY again.
(cd "$checkout" && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" nodes uncordon "$first" && "${ctl[@]}" nodes cordon "$second") \
  >"$walk/cordon.txt" 2>&1 || { cat "$walk/cordon.txt"; fail "cordon $second"; }
place_stock t4.1x 1
(cd "$checkout" && "${ctl[@]}" stocks list) >"$walk/spare.txt" 2>&1
awk -v n="$second" '$2 == "t4.1x" && $3 != n && $4 == "available"' "$walk/spare.txt" | grep -q . \
  || { cat "$walk/spare.txt"; fail "no spare t4.1x stock off $second"; }
lost_dir=$(dirname "$(readlink "$state/logs/agent-$second.log")")
killed=$(date +%s%N)
"$checkout/tools/node-host" kill "$lost_dir"
(cd "$checkout" && "${ctl[@]}" login --user alice --password-file "$walk/alice.pw") >/dev/null
third=$(moved_from "$second") || {
  (cd "$checkout" && "${ctl[@]}" instances get nb-1
   "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password >/dev/null
   "${ctl[@]}" stocks list; "${ctl[@]}" nodes list) || true
  tail -n 40 "$state/logs/stock.log"
  fail "nb-1 did not run again after $second died"
}
moved_ms=$((($(date +%s%N) - killed) / 1000000))
(cd "$checkout" && "${ctl[@]}" instances get nb-1) >"$walk/moved.txt"
grep -q "starting again on another node" "$walk/moved.txt" \
  || { cat "$walk/moved.txt"; fail "nb-1's events do not say why it moved"; }
cell=$(run_cell "print(open('/data/x').read())") || fail "jupyter on $third: $cell"
grep -q "written on $first" <<<"$cell" || fail "nb-1 on $third read: $cell"
(cd "$checkout" && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" stocks list) >"$walk/stocks.txt" 2>&1 || { cat "$walk/stocks.txt"; fail "stocks list"; }
if awk -v n="$second" '$3 == n && $4 == "claimed"' "$walk/stocks.txt" | grep -q .; then
  cat "$walk/stocks.txt"; fail "a stock stays claimed on the dead $second"
fi
echo "node loss: $second died; nb-1 RUNNING on $third ${moved_ms} ms later, reading its x"
(cd "$tmp" && "$gpuaas" up --storage ceph --nodes 3) >"$tmp/up-again.log" 2>&1 \
  || { cat "$tmp/up-again.log"; fail "up again after the node's loss"; }
for _ in $(seq 1 60); do
  (cd "$checkout" && "${ctl[@]}" nodes get "$second") 2>/dev/null | grep -qiE "^status: *ready" && break
  sleep 0.5
done
(cd "$checkout" && "${ctl[@]}" nodes get "$second") >"$walk/back.txt" 2>&1
grep -qiE "^status: *ready" "$walk/back.txt" || { cat "$walk/back.txt"; fail "$second is not READY again"; }
echo "$second came back READY"

# A partition: nb-1's node loses its link (the veth's host end down); its agent and workload
# live on, unseen. Within the node timeout nb-1 runs again on another node with its storage;
# when the link comes back, the agent learns that the old run is no longer its node's and ends
# it, so nb-1 does not run twice for longer than the partition.
(cd "$checkout" && "${ctl[@]}" nodes uncordon "$second" && "${ctl[@]}" nodes cordon "$third") \
  >"$walk/cordon-2.txt" 2>&1 || { cat "$walk/cordon-2.txt"; fail "cordon $third"; }
place_stock t4.1x 1
cut_dir=$(dirname "$(readlink "$state/logs/agent-$third.log")")
cut_link=$(cat "$cut_dir/host.veth")
jupyter_on() { in_node "$1" pgrep -f "python3 -m jupyter_server" >/dev/null; }
jupyter_on "$cut_dir" || fail "no Jupyter runs on $third before the partition"
cut=$(date +%s%N)
ip link set "$cut_link" down
(cd "$checkout" && "${ctl[@]}" login --user alice --password-file "$walk/alice.pw") >/dev/null
fourth=$(moved_from "$third") || {
  (cd "$checkout" && "${ctl[@]}" instances get nb-1
   "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password >/dev/null
   "${ctl[@]}" stocks list; "${ctl[@]}" nodes list) || true
  tail -n 30 "$state/logs/instance.log" "$state/logs/stock.log"
  ip link set "$cut_link" up
  fail "nb-1 did not run again while $third was cut off"
}
moved_ms=$((($(date +%s%N) - cut) / 1000000))
jupyter_on "$cut_dir" || fail "the old run on $third ended during the partition, unseen"
ip link set "$cut_link" up
healed=$(date +%s%N)
for _ in $(seq 1 120); do
  jupyter_on "$cut_dir" || break
  sleep 0.5
done
jupyter_on "$cut_dir" && fail "the old run of nb-1 still runs on $third 60 s after its link came back"
ended_ms=$((($(date +%s%N) - healed) / 1000000))
cell=$(run_cell "print(open('/data/x').read())") || fail "jupyter on $fourth: $cell"
grep -q "written on $first" <<<"$cell" || fail "nb-1 on $fourth read: $cell"
echo "partition: $third cut off; nb-1 RUNNING on $fourth ${moved_ms} ms later; the old run ended" \
  "${ended_ms} ms after the link came back"

# down with a fleet that names one node still ends all three (each node host has its disk
# under the data directory).
GPUAAS_SIM_AGENTS="node-a 2xT4" "$gpuaas" down >"$tmp/down.log" 2>&1 \
  || { cat "$tmp/down.log"; fail "down"; }
for dir in "$(dirname "$node_a_dir")"/*; do
  "$checkout/tools/node-host" alive "$dir" && fail "node $dir still runs after down"
done
ip link show "$GPUAAS_NODE_BRIDGE" >/dev/null 2>&1 && fail "the nodes' bridge outlived down"
if findmnt -rn -o TARGET | grep -q "^$(dirname "$node_a_dir")/"; then
  fail "a node's mount outlived down"
fi
echo "down ended every node and removed the bridge"

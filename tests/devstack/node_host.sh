#!/usr/bin/env bash
# tools/node-host's contract (issue 34): two nodes as hosts of their own on a bridge of the
# test's own. Inside a node: its host name, its own disk, an empty read-only control-plane state
# directory, its own loopback (the machine's 127.0.0.1 services unreachable), the control
# plane's address reachable, its own process table, orphans reaped. From the machine: each node
# at its address. A node outlives its command; stop ends its command with SIGTERM; kill ends every process of it at once and
# its network goes; a node starts again on the same disk; bridge-down removes the bridge.
set -euo pipefail
ROOT=${1:?usage: node_host.sh SOURCE_DIR}
NODE_HOST=$ROOT/tools/node-host
PY=/usr/bin/python3

work=$(mktemp -d /tmp/gpuaas-node-host-test.XXXXXX)
# A /24 and a bridge name nothing else on this machine uses (tests run side by side).
for n in $(shuf -i 1-250); do
  ip -4 -o addr | grep -q " 10\.213\.$n\." || break
done
net=10.213.$n bridge=gpnt$n
servers=()
cleanup() {
  for node in a b; do "$NODE_HOST" kill "$work/state/nodes/$node" || true; done
  "$NODE_HOST" bridge-down "$bridge" || true
  for pid in "${servers[@]}"; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT
fail() {
  echo "FAIL: $*" >&2
  exit 1
}
http() { curl -s -m 3 "$@"; }
# serve ADDRESS PORT DIR: files over HTTP. Not `python3 -m http.server`, which looks its own
# address up in DNS first (a minute of timeouts in a node, which has no resolver).
serve() {
  exec $PY -c 'import functools, http.server, socketserver, sys
class Server(http.server.ThreadingHTTPServer):
    def server_bind(self):
        socketserver.TCPServer.server_bind(self)
        self.server_name, self.server_port = "node", self.server_address[1]
handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=sys.argv[3])
Server((sys.argv[1], int(sys.argv[2])), handler).serve_forever()' "$@"
}

# The "control plane": its state directory with a secret, a service on loopback only and one
# on the bridge's address.
mkdir -p "$work/state/nodes/a/www" "$work/state/nodes/b/www" "$work/cp"
echo "secret" >"$work/state/admin-password"
echo "from the control plane" >"$work/cp/hello"
echo a >"$work/state/nodes/a/www/who"
echo b >"$work/state/nodes/b/www/who"
loopback_port=$(shuf -i 23000-23999 -n 1)
serve 127.0.0.1 "$loopback_port" "$work/cp" >/dev/null 2>&1 &
servers+=($!)

# Bad input is refused by name.
if out=$("$NODE_HOST" start "$work/state/nodes/a" a "$net.11" "$net.1" "$bridge" -- true 2>&1); then
  fail "an address without its prefix was taken"
fi
grep -q "ADDRESS must carry its prefix" <<<"$out" || fail "unclear error: $out"

start_node() {
  local node=$1 address=$2
  "$NODE_HOST" start "$work/state/nodes/$node" "$node" "$address/24" "$net.1" "$bridge" \
    --hide "$work/state" -- \
    bash -c "$(declare -f serve); PY=$PY serve 0.0.0.0 8000 $work/state/nodes/$node/www"
}
start_node a "$net.11"
start_node b "$net.12"
cp_port=$(shuf -i 24000-24999 -n 1)
serve "$net.1" "$cp_port" "$work/cp" >/dev/null 2>&1 &
servers+=($!)
for _ in $(seq 50); do
  http -o /dev/null "http://$net.11:8000/who" && http -o /dev/null "http://$net.1:$cp_port/hello" && break
  sleep 0.1
done
"$NODE_HOST" start "$work/state/nodes/a" a "$net.11/24" "$net.1" "$bridge" -- true 2>/dev/null \
  && fail "a second start of a running node was taken"

in_a() { "$NODE_HOST" exec "$work/state/nodes/a" -- "$@"; }
[ "$(in_a hostname)" = a ] || fail "node a's host name is $(in_a hostname)"
[ "$(in_a cat "$work/state/nodes/a/www/who")" = a ] || fail "node a does not see its own disk"
in_a test -e "$work/state/admin-password" && fail "node a sees the control plane's state"
in_a test -e "$work/state/nodes/b" && fail "node a sees node b's disk"
in_a touch "$work/state/planted" 2>/dev/null && fail "node a wrote into the hidden state directory"
[ -e "$work/state/admin-password" ] || fail "hiding removed the machine's own file"
in_a curl -s -m 2 "http://127.0.0.1:$loopback_port/hello" \
  && fail "node a reached a service on the machine's loopback"
[ "$(in_a curl -s -m 3 "http://$net.1:$cp_port/hello")" = "from the control plane" ] \
  || fail "node a does not reach the control plane's address"
[ "$(in_a curl -s -m 3 http://127.0.0.1:8000/who)" = a ] || fail "node a's own loopback"
in_a ps -e -o args | grep -q "127.0.0.1 $loopback_port" && fail "node a sees the machine's processes"
in_a sh -c 'sleep 0.1 & exit 0'
sleep 0.5
[ "$(in_a ps -e -o stat= | grep -c '^Z' || true)" = 0 ] || fail "node a leaves zombies"

[ "$(http "http://$net.11:8000/who")" = a ] || fail "the machine does not reach node a"
[ "$(http "http://$net.12:8000/who")" = b ] || fail "the machine does not reach node b"

# The command ends; the node stays up, as a host outlives its agent.
"$NODE_HOST" exec "$work/state/nodes/b" -- kill -TERM "$(cat "$work/state/nodes/b/host.command.pid")"
for _ in $(seq 30); do http -o /dev/null "http://$net.12:8000/who" || break; sleep 0.1; done
http "http://$net.12:8000/who" && fail "node b's command answers after it was ended"
"$NODE_HOST" alive "$work/state/nodes/b" || fail "node b went down with its command"

# stop: the command gets SIGTERM, the node ends, its veth goes; the bridge keeps its MAC, so
# node a reaches the control plane at once (its ARP entry for the gateway still holds).
veth_b=$(cat "$work/state/nodes/b/host.veth")
bridge_mac=$(cat "/sys/class/net/$bridge/address")
"$NODE_HOST" stop "$work/state/nodes/b"
[ "$(cat "/sys/class/net/$bridge/address")" = "$bridge_mac" ] \
  || fail "the bridge's MAC changed when node b went"
[ "$(in_a curl -s -m 3 "http://$net.1:$cp_port/hello")" = "from the control plane" ] \
  || fail "node a lost the control plane when node b went"
"$NODE_HOST" alive "$work/state/nodes/b" && fail "node b runs after stop"
ip link show "$veth_b" >/dev/null 2>&1 && fail "node b's veth outlived it"
http "http://$net.12:8000/who" && fail "node b answers after stop"

# kill: every process of the node at once (its server, an orphan), as a power cut.
in_a sh -c 'setsid sleep 600 >/dev/null 2>&1 < /dev/null & exit 0'
init_a=$(cat "$work/state/nodes/a/host.pid")
in_node_a() { [ "$(readlink "/proc/$1/ns/pid")" = "$(readlink "/proc/$init_a/ns/pid")" ]; }
server_a=$(pgrep -f "0.0.0.0 8000 $work/state/nodes/a/www" | while read -r pid; do
  in_node_a "$pid" && echo "$pid" || true
done)
orphan_a=$(pgrep -f "^sleep 600$" | while read -r pid; do in_node_a "$pid" && echo "$pid" || true; done)
[ -n "$orphan_a" ] || fail "the orphan in node a is not found"
"$NODE_HOST" kill "$work/state/nodes/a"
for pid in $server_a $orphan_a; do
  kill -0 "$pid" 2>/dev/null && fail "process $pid of node a outlived its kill"
done
http "http://$net.11:8000/who" && fail "node a answers after its kill"

# A node comes back on the same disk.
start_node a "$net.11"
for _ in $(seq 50); do http -o /dev/null "http://$net.11:8000/who" && break; sleep 0.1; done
[ "$(http "http://$net.11:8000/who")" = a ] || fail "node a did not come back"
"$NODE_HOST" stop "$work/state/nodes/a"
"$NODE_HOST" alive "$work/state/nodes/a" && fail "node a runs after stop"

"$NODE_HOST" bridge-down "$bridge"
ip link show "$bridge" >/dev/null 2>&1 && fail "bridge-down left $bridge"
echo "node-host: all checks passed"

#!/usr/bin/env bash
# ctest devstack_up_down_timewait: `up`, `down`, `up` again at once, ROUNDS times
# (GPUAAS_UP_DOWN_ROUNDS, default 1: about 70 s a round on 2 cores), each `down` with client
# connections open on every port of the stack, so that the next `up` meets TIME-WAIT sockets on
# its own ports (the servers close first), as a real restart does. Every `up` must succeed at the
# first try on the same ports, every `down` must return only when the processes it stopped have
# exited, and no port of the stack may lie in the kernel's ephemeral range (where an outgoing
# connection's TIME-WAIT would hold it, which no listener can take over).
#   up_down_timewait.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
rounds=${GPUAAS_UP_DOWN_ROUNDS:-1}

# shellcheck source=stack_lib.sh
source "$(dirname "$0")/stack_lib.sh"

# The defaults first: tools/gpuaas's own ports, with nothing overridden, lie below the range.
read -r low high </proc/sys/net/ipv4/ip_local_port_range
defaults=$(grep -oE 'GPUAAS_[A-Z0-9_]*PORT:-[0-9]+' "$src/tools/gpuaas" | sed -E 's/.*:-//' | sort -un)
for p in $defaults; do
  [ "$p" -lt "$low" ] || fail "tools/gpuaas's default port $p is inside the ephemeral range $low-$high"
done
echo "default ports below the ephemeral range ($low-$high): $(echo $defaults)"

start_stack "$tmp/up.log"
grep -q "inside the ephemeral port range" "$tmp/up.log" && fail "up warned: $(grep ephemeral "$tmp/up.log")"
pgdir=$(cat "$state/pg-dir")

# The ports up listens on, from what it started.
ports=("$GPUAAS_PG_PORT" "$GPUAAS_AUTH_PORT" "$GPUAAS_STOCK_PORT" "$GPUAAS_STORAGE_PORT"
       "$GPUAAS_INSTANCE_PORT" "$GPUAAS_S3_PORT" "$GPUAAS_PROXY_PORT" "$GPUAAS_GATEWAY_PORT"
       "$GPUAAS_AGENT_PORT" $((GPUAAS_AGENT_PORT + 1)) $((GPUAAS_AGENT_PORT + 2)))

# hold PORT...: connects to each port and, once the server has closed its end, closes ours, so
# the server's side ends in TIME-WAIT on the stack's port. Runs until every server closed (120 s).
hold() {
  /usr/bin/python3 - "$@" <<'PY'
import select, socket, sys, time
socks = []
for port in sys.argv[1:]:
    s = socket.create_connection(("127.0.0.1", int(port)), timeout=5)
    socks.append(s)
print("holding", len(socks), "connections", flush=True)
deadline = time.time() + 120
while socks and time.time() < deadline:
    ready, _, _ = select.select(socks, [], [], 0.2)
    for s in ready:
        try:
            data = s.recv(65536)
        except OSError:
            data = b""
        if not data:
            s.close()
            socks.remove(s)
for s in socks:
    print("still open:", s.getpeername()[1], flush=True)
sys.exit(1 if socks else 0)
PY
}

for round in $(seq 1 "$rounds"); do
  for name in auth stock storage instance proxy; do
    [ -f "$state/pids/$name.pid" ] && pids+=("$(cat "$state/pids/$name.pid")")
  done
  stack_pids=()
  for f in "$state"/pids/*.pid; do stack_pids+=("$(cat "$f")"); done
  stack_pids+=("$(head -n1 "$pgdir/data/postmaster.pid")")
  pids+=("${stack_pids[@]}")

  hold "${ports[@]}" >"$tmp/hold.log" 2>&1 &
  holder=$!
  # Every connection is accepted before down starts.
  for _ in $(seq 1 50); do grep -q holding "$tmp/hold.log" && break; sleep 0.1; done
  grep -q holding "$tmp/hold.log" || { cat "$tmp/hold.log"; fail "round $round: could not connect"; }

  "$gpuaas" down >"$tmp/down.log" 2>&1 || { cat "$tmp/down.log"; fail "round $round: down failed"; }
  for pid in "${stack_pids[@]}"; do
    ! alive "$pid" || fail "round $round: $pid ($(tr '\0' ' ' <"/proc/$pid/cmdline")) runs after down returned"
  done
  wait "$holder" || { cat "$tmp/hold.log"; fail "round $round: a server kept its connection open"; }
  tw=$(ss -Htan state time-wait | awk '{ print $3 }' | sed -E 's/.*://' | sort -un)
  held=0
  for p in "${ports[@]}"; do grep -qx "$p" <<<"$tw" && held=$((held + 1)); done
  [ "$held" -gt 0 ] || fail "round $round: no TIME-WAIT on the stack's ports to test against"

  if ! "$gpuaas" up >"$tmp/up.log" 2>&1; then
    cat "$tmp/up.log"
    tail -n 20 "$state"/logs/*.log
    fail "round $round: up right after down failed, with TIME-WAIT on $held of the stack's ports"
  fi
  echo "round $round: down returned with every process gone; up succeeded over TIME-WAIT on $held ports"
done
echo "PASS"

#!/usr/bin/env bash
# Issue 23's budget "warm-cache start → RUNNING p99 under 1 s on the dev stack": on a private dev
# stack (bench/containers/stack.sh: one simulated node, OCI containers, veth networks) creates
# COUNT (50) instances of the catalog's `tiny` image one after another (each waits for the last
# to be RUNNING; the first pulls the image, the rest find it cached), reports create → RUNNING,
# then stops RESTARTS (20) of them and times StartInstance → RUNNING of a stopped instance.
# Then the agent's log lines of one start, for where the time goes.
#
#   bench/containers/warm_start.sh [build-dir]        (default build-dir: build)
set -euo pipefail
BUILD=$(realpath "${1:-build}")
COUNT=${COUNT:-50}
RESTARTS=${RESTARTS:-20}
# shellcheck source=bench/containers/stack.sh
. "$(dirname "${BASH_SOURCE[0]}")/stack.sh"
echo "load before the run: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) cores" >&2
# One first to pull the image, outside the figures.
"$BUILD/bench/instance/instance_start_bench" --spec bench.share --tenant bench --image tiny \
  --count 1 --rate 0 --prefix pull --timeout 120
"$BUILD/bench/instance/instance_start_bench" --spec bench.share --tenant bench --image tiny \
  --count "$COUNT" --rate 0 --prefix warm --restarts "$RESTARTS"
# Where the time goes: the programs the agent and its shims run for TRACED (3) more starts,
# one at a time, with their times (strace on the agent, so each is a little slower than above).
if [ "${TRACED:-3}" -gt 0 ]; then
  trace=$(mktemp)
  strace -f -qq -ttt -e trace=execve,mkdir,mkdirat,mount,mount_setattr,open_tree,move_mount,connect -e signal=none \
    -o "$trace" -p "$AGENT_PID" &
  strace_pid=$!
  sleep 1
  "$BUILD/bench/instance/instance_start_bench" --spec bench.share --tenant bench --image tiny \
    --count "${TRACED:-3}" --rate 0 --prefix traced
  kill "$strace_pid"
  wait "$strace_pid" || true
  echo "== the agent's and its children's programs and mounts (strace -ttt):"
  grep -E 'execve\(|mkdir.*traced|mount|open_tree|connect.*sin_port=htons\((8080|20[0-9]{3})\)' "$trace" | grep -v ENOENT | cut -c1-220
  rm -f "$trace"
fi

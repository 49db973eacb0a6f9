# Sourced by the devstack tests (bash, set -euo pipefail): a throwaway checkout of tools/ under a
# 0700 directory at a path over 200 characters, run against the build tree (GPUAAS_SKIP_BUILD=1:
# nothing is built), on free ports below the kernel's ephemeral range, and removed with whatever
# it started when the test ends, however it ends. Before sourcing, set `src` (the source tree)
# and `build` (the build tree). After it: $tmp, $checkout, $gpuaas (tools/gpuaas there), $state;
# `pids+=(...)` adds processes to kill if `down` misses them; start_stack LOG brings the stack up.

fail() { echo "FAIL: $*" >&2; exit 1; }

# Whether process $1 exists and is no zombie (which an init that does not reap would leave).
alive() {
  local state
  # The state follows the command name, which is in parentheses and may hold spaces.
  state=$(sed -n 's/^.*) \([A-Za-z]\) .*$/\1/p' "/proc/$1/stat" 2>/dev/null) || return 1
  [[ -n $state && $state != Z ]]
}

# A run killed outright (SIGKILL at ctest's timeout) leaves its stack up: stop what a run that
# no longer exists left behind; never touch one that still runs.
for old in "${TMPDIR:-/tmp}"/gpuaas-devstack.*; do
  # Only our own directories: a planted one must not make this script (often root) run its tools.
  [ -O "$old" ] && [ ! -L "$old" ] || continue
  [ -f "$old/runner.pid" ] || continue
  alive "$(cat "$old/runner.pid")" && continue
  echo "removing what an interrupted run left in $old"
  for tool in "$old"/*/*/*/gpuaas/tools/gpuaas; do
    [ -x "$tool" ] && "$tool" down --purge >/dev/null 2>&1 || true
  done
  rm -rf "$old" 2>/dev/null || true
done

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuaas-devstack.XXXXXX")
echo $$ >"$tmp/runner.pid"
parent=$tmp/$(printf 'p%.0s' {1..70})/$(printf 'q%.0s' {1..70})/$(printf 'r%.0s' {1..70})
checkout=$parent/gpuaas
gpuaas=$checkout/tools/gpuaas
state=$checkout/.gpuaas

export GPUAAS_BUILD_DIR=$build GPUAAS_SKIP_BUILD=1
# No demo tenant and its stock (it would take GPUs a test counts on) unless the test asks.
export GPUAAS_DEMO=${GPUAAS_DEMO:-0}
unset GPUAAS_STATE_DIR GPUAAS_PG_DIR
# Not root: the cluster would go to ~/.local/state; keep it in the temp dir, at a long path too.
[ "$(id -u)" -eq 0 ] || export XDG_STATE_HOME=$parent/state

pids=()
cleanup() {
  local rc=$?
  set +e
  "$gpuaas" down --purge >/dev/null 2>&1
  # Only what this test started, if down missed it.
  for pid in "${pids[@]}"; do
    alive "$pid" && kill -KILL "$pid"
  done
  if [ -n "${pgdir:-}" ] && [ -d "$pgdir" ]; then
    "$checkout/tools/pg-cluster" stop "$pgdir" >/dev/null 2>&1
    rm -rf "$pgdir"
  fi
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

mkdir -p "$checkout/tools"
chmod 700 "$tmp" "$parent"
for tool in gpuaas pg-cluster pg-ha pg-common.sh pg-service-role install-deps install-images gen-certs \
    agent-credentials registry supervise ceph-cluster ceph-cluster-admin node-host; do
  cp "$src/tools/$tool" "$checkout/tools/"
done
cp -r "$src/tools/images" "$checkout/tools/"
# up --monitoring's rules.
cp -r "$src/tools/monitoring" "$checkout/tools/"
echo "checkout: $checkout (${#checkout} characters, parent mode $(stat -c %a "$parent"))"

listening() { [ -n "$(ss -Hltn "sport = :$1" 2>/dev/null)" ]; }
# Ports from 23000 (the agents hand workloads 20000-22999) to below the ephemeral range, where
# no outgoing connection can take one, as the stack's defaults are.
read -r ephemeral_low _ </proc/sys/net/ipv4/ip_local_port_range
taken=" "
# free_ports N: sets port to the first of N consecutive ports that nothing listens on and this
# test has not taken yet.
free_ports() {
  local n=$1 base i ok
  while :; do
    base=$((23000 + RANDOM % (ephemeral_low - 23000 - n)))
    ok=1
    for ((i = 0; i < n; i++)); do
      if listening $((base + i)) || [[ $taken == *" $((base + i)) "* ]]; then ok=0; break; fi
    done
    if [ $ok = 1 ]; then
      for ((i = 0; i < n; i++)); do taken+="$((base + i)) "; done
      port=$base
      return
    fi
  done
}

# choose_ports: a free port for everything `up` starts, in GPUAAS_*_PORT.
choose_ports() {
  taken=" "
  free_ports 1; export GPUAAS_PG_PORT=$port
  free_ports 1; export GPUAAS_REGISTRY_PORT=$port
  free_ports 1; export GPUAAS_AUTH_PORT=$port
  free_ports 1; export GPUAAS_STOCK_PORT=$port
  free_ports 1; export GPUAAS_STORAGE_PORT=$port
  free_ports 1; export GPUAAS_S3_PORT=$port
  free_ports 1; export GPUAAS_INSTANCE_PORT=$port
  free_ports 6; export GPUAAS_METRICS_PORT=$port   # the four services, the proxy, the gateway
  free_ports 1; export GPUAAS_PROXY_PORT=$port
  free_ports 1; export GPUAAS_GATEWAY_PORT=$port
  free_ports 3; export GPUAAS_AGENT_PORT=$port
  free_ports 3; export GPUAAS_AGENT_METRICS_PORT=$port
  # up --ha's: the second PostgreSQL node, etcd (client, peer), Patroni's REST APIs.
  free_ports 1; export GPUAAS_PG_PORT2=$port
  free_ports 2; export GPUAAS_ETCD_PORT=$port
  free_ports 2; export GPUAAS_PATRONI_PORT=$port
  # up --storage ceph's cluster: a mon's two ports and 18 for the other daemons.
  free_ports 20; export GPUAAS_CEPH_PORT=$port
  # up --monitoring's Prometheus.
  free_ports 1; export GPUAAS_PROMETHEUS_PORT=$port
}

# start_stack LOG [UP_FLAGS...]: `up` on free ports; another process may take a port between our
# check and the bind, so up to three sets of ports are tried.
start_stack() {
  local log=$1 attempt
  shift
  for attempt in 1 2 3; do
    choose_ports
    if (cd "$tmp" && "$gpuaas" up "$@") >"$log" 2>&1; then
      return 0
    fi
    cat "$log" >&2
    [ -f "$state/pg-dir" ] && pgdir=$(cat "$state/pg-dir")
    "$gpuaas" down --purge || true
    [ $attempt = 3 ] && fail "tools/gpuaas up failed three times"
    echo "up failed (attempt $attempt); trying other ports"
  done
}

# stock_of SPEC: the spec's stock, as gpuaasctl's summary counts it (0 when it lists none).
stock_of() {
  (cd "$checkout" && "${ctl[@]}" stocks summary) | awk -v s="$1" '$1 == s { n = $2 } END { print n + 0 }'
}

# place_stock SPEC N: N more warm stocks of SPEC through gpuaasctl (the array ctl, signed in as
# the admin). Stock is placed on READY nodes, and the agents register a moment after up.
place_stock() {
  local spec=$1 n=$2 out="$tmp/stock-$1.txt" before
  before=$(stock_of "$spec")
  for _ in $(seq 1 60); do
    (cd "$checkout" && "${ctl[@]}" stocks create --spec "$spec" -n "$n") >"$out" 2>&1 && break
    sleep 0.5
  done
  [ "$(stock_of "$spec")" = $((before + n)) ] || { cat "$out"; fail "no $n more $spec stock"; }
}

# s3_as_accessor FILE: sets the array `s3` to the AWS CLI signed in as the accessor whose keys
# `gpuaasctl accessors create` printed into FILE, against the stack's S3 endpoint, with files of
# its own under $walk.
s3_as_accessor() {
  local key secret aws
  key=$(awk '/^access key id:/{print $4}' "$1")
  secret=$(awk '/^secret access key:/{print $4}' "$1")
  [ -n "$key" ] && [ -n "$secret" ] || fail "accessors create printed no keys"
  # Debian's AWS CLI (v2) first: a v1 CLI elsewhere on PATH presigns with SigV2.
  aws=$(command -v /usr/bin/aws aws | head -n1 || true)
  [ -n "$aws" ] || fail "no AWS CLI (tools/install-deps installs awscli)"
  s3=(env -u AWS_CA_BUNDLE -u AWS_PROFILE HOME="$walk/home" AWS_CONFIG_FILE="$walk/aws-config"
      AWS_SHARED_CREDENTIALS_FILE="$walk/aws-credentials" AWS_ACCESS_KEY_ID="$key"
      AWS_SECRET_ACCESS_KEY="$secret" AWS_DEFAULT_REGION=us-east-1
      "$aws" --endpoint-url "http://127.0.0.1:$GPUAAS_S3_PORT")
}

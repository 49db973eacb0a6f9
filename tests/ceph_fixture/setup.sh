#!/usr/bin/env bash
# ctest fixture `ceph`, setup half: one throwaway Ceph cluster (tools/ceph-cluster: a mon, a
# mgr, an OSD, an MDS and the CephFS `gpuaas`) for a whole ctest run, in OUT/cluster (OUT is the
# build tree's test-ceph/), on a port base whose 20 ports are all free, so that two runs (two
# build trees, or the dev stack's cluster on 16789) never clash. It writes OUT/conf (the path
# of the cluster's ceph.conf) and OUT/keyring (of its client.admin keyring, 0600), which tests
# read through libs/testing/ceph_test.h (GPUAAS_TEST_CEPH_DIR names OUT).
set -euo pipefail
ceph_cluster=$1
out=$2

mkdir -p "$out"
chmod 700 "$out"
# A cluster left by an interrupted run would otherwise leak; cleanup.sh is idempotent.
"$(dirname "$0")/cleanup.sh" "$ceph_cluster" "$out"

# tools/ceph-cluster's ports: the base and the 19 after it.
ports_free() {
  local p
  for ((p = $1; p < $1 + 20; p++)); do
    ss -Hltn "sport = :$p" | grep -q . && return 1
  done
  return 0
}

started=$SECONDS
# Below the ephemeral range (32768 and up), away from the services' 17xxx and 9xxx. Another
# process may take a port between our check and a daemon's bind; then start fails and we purge
# and try another base.
for _ in $(seq 1 5); do
  base=$((20000 + RANDOM % 12000))
  ports_free "$base" || continue
  if conf=$("$ceph_cluster" start "$out/cluster" --port-base "$base"); then
    echo "$conf" >"$out/conf"
    echo "$out/cluster/ceph.client.admin.keyring" >"$out/keyring"
    "$(dirname "$0")/../common/reap_after_run.sh" "$PPID" "$out/cluster" \
      "$ceph_cluster" purge "$out/cluster"
    echo "ceph fixture: $conf (ports $base-$((base + 19))), ready in $((SECONDS - started)) s"
    exit 0
  fi
  "$ceph_cluster" purge "$out/cluster" || true
done
echo "ceph fixture: could not start a cluster on free ports" >&2
exit 1

#!/usr/bin/env bash
# ctest fixture `ceph`, cleanup half: stops the cluster setup.sh started and removes it.
set -euo pipefail
ceph_cluster=$1
out=$2

"$ceph_cluster" purge "$out/cluster"
rm -f "$out/conf" "$out/keyring"

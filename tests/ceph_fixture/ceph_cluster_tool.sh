#!/usr/bin/env bash
# tools/ceph-cluster's contract, on a cluster of its own (not the fixture's): start prints the
# path of ceph.conf and leaves DIR 0700 and the admin keyring 0600; a second start of a running
# cluster is quick; status says HEALTH_OK (0) or not running (3); stop is idempotent and leaves
# no daemon; a stopped cluster starts again with its data (a subvolume and a file in it); purge
# kills what still uses it (a ceph-fuse mount) and removes DIR; ports taken refuse a new cluster.
# Usage: ceph_cluster_tool.sh SOURCE_DIR
set -euo pipefail
tool=$1/tools/ceph-cluster

fail() { echo "FAIL: $*" >&2; exit 1; }

tmp=$(mktemp -d "${TMPDIR:-/tmp}/gpuaas-ceph-tool.XXXXXX")
dir=$tmp/cluster
mnt=$tmp/mnt
cleanup() {
  local rc=$?
  "$tool" purge "$dir" >/dev/null 2>&1 || true
  rm -rf "$tmp"
  exit $rc
}
trap cleanup EXIT
trap 'exit 143' TERM INT HUP

# A base whose 20 ports are free, below the ephemeral range.
base=
for _ in $(seq 1 50); do
  candidate=$((20000 + RANDOM % 12000))
  for ((p = candidate; p < candidate + 20; p++)); do
    ss -Hltn "sport = :$p" | grep -q . && continue 2
  done
  base=$candidate
  break
done
[[ -n $base ]] || fail "no 20 free ports"

daemons() { pgrep -f -- "-c $dir/ceph.conf\$" || true; }
ceph_() { ceph -c "$dir/ceph.conf" "$@"; }

started=$SECONDS
conf=$("$tool" start "$dir" --port-base "$base")
echo "made and started in $((SECONDS - started)) s"
[[ $conf == "$dir/ceph.conf" ]] || fail "start printed '$conf', not $dir/ceph.conf"
[[ $(stat -c %a "$dir") == 700 ]] || fail "$dir is $(stat -c %a "$dir"), not 0700"
[[ $(stat -c %a "$dir/ceph.client.admin.keyring") == 600 ]] || fail "the admin keyring is not 0600"
[[ $(daemons | wc -l) -eq 4 ]] || fail "want 4 daemons, have: $(daemons | xargs)"
ss -Hltn | awk '{ print $4 }' | grep -q "^127.0.0.1:$base\$" || fail "the mon does not listen on 127.0.0.1:$base"

out=$("$tool" status "$dir") || fail "status of a running cluster exited $?"
[[ $out == HEALTH_OK ]] || fail "status printed '$out'"

again=$SECONDS
"$tool" start "$dir" --port-base "$base" >/dev/null
[[ $((SECONDS - again)) -le 10 ]] || fail "a second start of a running cluster took $((SECONDS - again)) s"
[[ $(daemons | wc -l) -eq 4 ]] || fail "a second start changed the daemons: $(daemons | xargs)"

# Data that must survive a stop: a subvolume with a file in it.
ceph_ fs subvolume create gpuaas keep --size 16777216
path=$(ceph_ fs subvolume getpath gpuaas keep)
mkdir -p "$mnt"
ceph-fuse -c "$dir/ceph.conf" --id admin -r "$path" "$mnt" >/dev/null 2>&1 || fail "ceph-fuse failed"
echo kept >"$mnt/file"
fusermount -u "$mnt"
for _ in $(seq 1 100); do
  pgrep -f -- "^ceph-fuse .* $mnt\$" >/dev/null || break
  sleep 0.1
done

stopping=$SECONDS
"$tool" stop "$dir"
echo "stopped in $((SECONDS - stopping)) s"
[[ -z $(daemons) ]] || fail "daemons left after stop: $(daemons | xargs)"
"$tool" stop "$dir" || fail "a second stop failed"
rc=0
"$tool" status "$dir" >/dev/null 2>&1 || rc=$?
[[ $rc -eq 3 ]] || fail "status of a stopped cluster exited $rc, not 3"

restarting=$SECONDS
"$tool" start "$dir" >/dev/null
echo "started again in $((SECONDS - restarting)) s"
ceph-fuse -c "$dir/ceph.conf" --id admin -r "$path" "$mnt" >/dev/null 2>&1 || fail "ceph-fuse failed after the restart"
[[ $(cat "$mnt/file") == kept ]] || fail "the file did not survive the restart"

# Another cluster on these ports is refused before anything is made.
rc=0
"$tool" start "$tmp/other" --port-base "$base" >/dev/null 2>&1 || rc=$?
[[ $rc -ne 0 ]] || fail "a second cluster started on ports in use"
[[ ! -e $tmp/other/ceph.conf ]] || fail "a refused cluster left a ceph.conf"

# purge with the mount still up: the client goes too, and nothing is left.
"$tool" purge "$dir"
[[ ! -e $dir ]] || fail "purge left $dir"
[[ -z $(pgrep -f -- "-c $dir/ceph.conf" || true) ]] || fail "purge left processes: $(pgrep -af -- "-c $dir/ceph.conf")"
! grep -q " $mnt " /proc/mounts || fail "purge left the mount on $mnt"
echo "PASS"

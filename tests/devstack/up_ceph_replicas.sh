#!/usr/bin/env bash
# ctest devstack_up_ceph_replicas: the README's walk-through on `tools/gpuaas up --storage ceph
# --replicas 2` (issue 33): two storage processes on the ceph backend alone behind one gRPC list
# and one S3 port; a ceph storage, an S3 upload with the AWS CLI, Jupyter through the proxy
# writing /data/hello.py, which S3 then lists and serves; kill -9 of the first storage replica,
# after which gpuaasctl and S3 reach the second, nothing is lost, and nb-1's stop detaches its
# storage there (the node's credential revoked); `down` leaves no ceph-fuse.
#   up_ceph_replicas.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2

# shellcheck source=stack_lib.sh
source "$(dirname "$0")/stack_lib.sh"
start_stack "$tmp/up.log" --storage ceph --replicas 2
cat "$tmp/up.log"
step=100

status=$("$gpuaas" status) || { echo "$status"; fail "status exited non-zero"; }
echo "$status"
for replica in storage storage-2; do
  [ -f "$state/pids/$replica.pid" ] || fail "no $replica after up --storage ceph --replicas 2"
  pids+=("$(cat "$state/pids/$replica.pid")")
done
grep -Eq "^storage-2 +pid [0-9]+ +127\.0\.0\.1:$((GPUAAS_STORAGE_PORT + step)) +SERVING$" <<<"$status" \
  || fail "status: storage-2 is not SERVING"
grep -qx "GPUAAS_STORAGE_ADDR=127.0.0.1:$GPUAAS_STORAGE_PORT,127.0.0.1:$((GPUAAS_STORAGE_PORT + step))" \
  "$state/stack.env" || fail "stack.env does not list both storage replicas"

walk=$tmp/walk
mkdir -p "$walk/home"
ctl=(env HOME="$walk/home" XDG_CONFIG_HOME="$walk/config" "$build/tools/gpuaasctl/gpuaasctl")
(cd "$checkout" \
  && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" storage-specs list \
  && "${ctl[@]}" stocks create --spec h100.1x -n 1 \
  && "${ctl[@]}" tenants create studio-a --max-gpus 16 --max-instances 20 --max-storage-bytes 1Ti \
  && echo "a-long-password" >"$walk/alice.pw" \
  && "${ctl[@]}" users create alice --tenant studio-a --role tenant-admin \
       --password-file "$walk/alice.pw" \
  && "${ctl[@]}" login --user alice --password-file "$walk/alice.pw" \
  && "${ctl[@]}" storages create work --spec ceph-10g \
  && "${ctl[@]}" accessors create work --ttl 1h) >"$walk/setup.txt" 2>&1 \
  || { cat "$walk/setup.txt"; fail "setup through gpuaasctl"; }
grep -q "^ceph-10g " "$walk/setup.txt" || { cat "$walk/setup.txt"; fail "no ceph-10g spec"; }
! grep -q "^standard-10g " "$walk/setup.txt" \
  || fail "replicas on Ceph alone list a local spec they cannot serve"
s3_as_accessor "$walk/setup.txt"
head -c 12M /dev/urandom >"$walk/model.bin"
"${s3[@]}" s3 cp "$walk/model.bin" s3://work/checkpoints/ --only-show-errors || fail "aws s3 cp up"

# Jupyter on the ceph storage, through the proxy: the cell writes /data/hello.py on the node's
# ceph-fuse mount, and S3 (either replica) serves it.
(cd "$checkout" \
  && "${ctl[@]}" instances create nb-1 --spec h100.1x --image jupyter --storage work --wait) \
  >"$walk/nb.txt" 2>&1 || { cat "$walk/nb.txt"; tail -n 30 "$state/logs/instance.log"; fail "jupyter"; }
token=$(cd "$checkout" && "${ctl[@]}" token) || fail "gpuaasctl token"
cell=$(env -i HOME="$walk/home" /usr/bin/python3 "$src/tests/images/jupyter_exec.py" \
         --base-url "http://127.0.0.1:$GPUAAS_PROXY_PORT/" \
         --host "nb-1-8888.gpuaas.localhost:$GPUAAS_PROXY_PORT" \
         --header "Authorization: Bearer $token" \
         "open('/data/hello.py', 'w').write('print(1)'); 1+1") || fail "jupyter through the proxy: $cell"
grep -q '"result": "2"' <<<"$cell" || fail "jupyter ran the cell as: $cell"
"${s3[@]}" s3 ls s3://work/ --recursive >"$walk/ls.txt" || fail "aws s3 ls"
grep -q " hello.py$" "$walk/ls.txt" || { cat "$walk/ls.txt"; fail "S3 does not list the notebook's hello.py"; }
echo "walk-through on two storage replicas: ceph storage, aws s3 cp, Jupyter wrote /data/hello.py, S3 lists it"
# The first storage replica dies at once: the second answers gpuaasctl and S3; nothing is lost.
kill -KILL "$(cat "$state/pids/storage.pid")"
(cd "$checkout" && "${ctl[@]}" storages get work) >"$walk/get.txt" 2>&1 \
  || { cat "$walk/get.txt"; fail "storages get after the kill"; }
"${s3[@]}" s3 cp s3://work/checkpoints/model.bin "$walk/model.back" --only-show-errors \
  || fail "aws s3 cp down after the kill"
cmp -s "$walk/model.bin" "$walk/model.back" || fail "model.bin came back different"
[ "$("${s3[@]}" s3 cp s3://work/hello.py -)" = "print(1)" ] || fail "hello.py after the kill"
(cd "$checkout" && "${ctl[@]}" instances stop nb-1 --wait --wait-timeout 90s) >"$walk/stop.txt" 2>&1 \
  || { cat "$walk/stop.txt"; ps -eo pid,stat,wchan:32,args | grep -E "^ *[0-9]+ D|ceph-fuse|jupyter" | cut -c1-200
         tail -n 30 "$state/logs/storage-2.log"
         fail "stop nb-1 after the kill (its detach, the node's ceph credential revoked, goes to storage-2)"; }
echo "after kill -9 of storage: storage-2 answered gpuaasctl, S3 served both files, nb-1 stopped and detached"

"$gpuaas" down >"$tmp/down.log" 2>&1 || { cat "$tmp/down.log"; fail "down"; }
for pid in "${pids[@]}"; do
  alive "$pid" && fail "process $pid still runs after down"
done
if findmnt -rn -o TARGET | grep -q "/storage[-0-9]*/ceph-mount$"; then
  findmnt -rn -o TARGET | grep ceph-mount
  fail "a storage replica's ceph-fuse mount outlived down"
fi
echo "down stopped both replicas and left no ceph-fuse mount"

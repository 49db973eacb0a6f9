#!/usr/bin/env bash
# Storage on Ceph beside the local backend (issue 33), side by side in one run, against the dev
# stack of `tools/gpuaas up --storage ceph` (one storage service serving both backends):
#   /data     inside a workload (an instance without an image on t4.1x): dd of 1 GiB with
#             conv=fsync, then read back, on a standard-10g storage and on a ceph-10g one
#   S3        1 GiB up, then down (build/bench/storage/s3_bench object) on each
#   snapshot  of the Ceph storage holding the 1 GiB file, and its restore into a new storage
# The cluster needs room for 3 GiB (the kept file, an S3 object, the restored copy): make it with
# a bigger OSD before `up` (tools/ceph-cluster start .gpuaas/ceph --port-base 16789 --osd-size 8G,
# then stop it; `up --storage ceph` starts it as it is). Each round measures local then ceph;
# ROUNDS (2) of them. Prints a markdown table. Leaves a
# tenant `bench` and a user of each run behind (their storages and instances are deleted).
#
#   bench/storage/ceph_vs_local.sh [ROUNDS]
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=${GPUAAS_BUILD_DIR:-$ROOT/build}
STATE=${GPUAAS_STATE_DIR:-$ROOT/.gpuaas}
S3=${GPUAAS_S3_ENDPOINT:-127.0.0.1:9000}
ROUNDS=${1:-2}
cd "$ROOT"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
ctl() { XDG_CONFIG_HOME=$work "$BUILD/tools/gpuaasctl/gpuaasctl" "$@"; }
say() { printf 'ceph_vs_local: %s\n' "$*" >&2; }

ctl login --user admin --password-file "$STATE/admin-password" >/dev/null
ctl tenants create bench --max-gpus 8 --max-instances 10 >/dev/null 2>&1 || true
ctl tenants update bench --max-storage-bytes 1Ti >/dev/null
ctl stocks create --spec t4.1x -n 4 --allow-partial >/dev/null 2>&1 || true  # the dd workloads' GPUs
head -c 24 /dev/urandom | base64 >"$work/pw"
run=$(date +%s)  # names of this run's own: an earlier run's leftovers never collide
ctl users create "bench-$run" --tenant bench --role tenant-admin --password-file "$work/pw" \
  >/dev/null
ctl login --user "bench-$run" --password-file "$work/pw" >/dev/null

declare -A storage=([local]=local-$run [ceph]=ceph-$run) spec=([local]=standard-10g
  [ceph]=ceph-10g) key
for b in local ceph; do
  ctl storages create "${storage[$b]}" --spec "${spec[$b]}" >/dev/null
  out=$(ctl -o json accessors create "${storage[$b]}" --ttl 1h)
  key[$b]=$(sed -n 's/.*"access_key_id": *"\([^"]*\)".*/\1/p' <<<"$out" | head -1)
  sed -n 's/.*"secret_access_key": *"\([^"]*\)".*/\1/p' <<<"$out" | head -1 >"$work/secret-$b"
done

# dd's "1073741824 bytes (1.1 GB, 1.0 GiB) copied, 4.2 s, 256 MB/s" → "256"
dd_rate() { sed -n 's/.*copied, [^,]*, \([0-9.]*\) \([kMG]\)B\/s.*/\1 \2/p' | awk '
  { r = $1; if ($2 == "k") r /= 1000; if ($2 == "G") r *= 1000; printf "%.0f", r }'; }

# dd_in_workload BACKEND ROUND KEEP: "write read" MB/s of 1 GiB in /data of an instance.
dd_in_workload() {
  local b=$1 r=$2 keep=$3 id="dd-$1-$2-$run" log
  local cmd='dd if=/dev/zero of=/data/dd.bin bs=1M count=1024 conv=fsync 2>&1 | tail -1;'
  cmd+=' dd if=/data/dd.bin of=/dev/null bs=1M 2>&1 | tail -1;'
  [ "$keep" = 1 ] || cmd+=' rm -f /data/dd.bin;'
  cmd+=' echo dd-done; exec sleep 3600'
  ctl instances create "$id" --spec t4.1x --storage "${storage[$b]}" --volume data=/data \
    --cmd "$cmd" --wait \
    >/dev/null
  for _ in $(seq 1 600); do
    log=$(ctl instances logs "$id" 2>/dev/null || true)
    grep -q dd-done <<<"$log" && break
    sleep 0.5
  done
  ctl instances delete "$id" >/dev/null
  printf '%s %s\n' "$(grep copied <<<"$log" | sed -n 1p | dd_rate)" \
    "$(grep copied <<<"$log" | sed -n 2p | dd_rate)"
}

declare -A rows
for ((r = 1; r <= ROUNDS; r++)); do
  for b in local ceph; do
    say "round $r: $b"
    read -r w rd < <(dd_in_workload "$b" "$r" "$([ "$b" = ceph ] && [ "$r" = "$ROUNDS" ] && echo 1 || echo 0)")
    json=$("$BUILD/bench/storage/s3_bench" --endpoint "$S3" --bucket "${storage[$b]}" \
      --access-key-id "${key[$b]}" --secret-access-key-file "$work/secret-$b" \
      object --size 1Gi --repeats 1 2>/dev/null)
    up=$(sed -n 's/.*"up_mb_per_s": *\([0-9.]*\).*/\1/p' <<<"$json" | xargs printf '%.0f')
    down=$(sed -n 's/.*"down_mb_per_s": *\([0-9.]*\).*/\1/p' <<<"$json" | xargs printf '%.0f')
    rows[$b]+="${rows[$b]:+ / }$w|$rd|$up|$down"
  done
done

say "snapshot and restore of ${storage[ceph]} (1 GiB in dd.bin)"
t=$(date +%s.%N)
ctl storages snapshots create "${storage[ceph]}" bench-snap >/dev/null
snap=$(echo "$(date +%s.%N) - $t" | bc)
t=$(date +%s.%N)
ctl --timeout 10m storages create restored-$run --spec ceph-10g --from-snapshot "${storage[ceph]}/bench-snap" \
  >/dev/null
restore=$(echo "$(date +%s.%N) - $t" | bc)
restored=$(ctl -o json storages get restored-$run | sed -n 's/.*"used_bytes": *"\{0,1\}\([0-9]*\).*/\1/p')
ctl storages snapshots delete "${storage[ceph]}" bench-snap >/dev/null
for s in restored-$run "${storage[local]}" "${storage[ceph]}"; do
  ctl storages delete "$s" >/dev/null || say "could not delete $s"
done

echo "| backend | /data write MB/s (dd, fsync) | /data read MB/s | S3 1 GiB up MB/s | S3 1 GiB down MB/s |"
echo "|---|---|---|---|---|"
for b in local ceph; do
  # rows hold "w|r|u|d / w|r|u|d ..." per round: print each column across rounds
  awk -v b="$b" -v s="${rows[$b]}" 'BEGIN {
    n = split(s, rounds, " / ")
    for (i = 1; i <= n; i++) { split(rounds[i], c, "|"); for (j = 1; j <= 4; j++) col[j] = col[j] (i > 1 ? " / " : "") c[j] }
    printf "| %s | %s | %s | %s | %s |\n", b, col[1], col[2], col[3], col[4] }'
done
printf '\nsnapshot of a storage holding 1 GiB: %.2f s; restore into a new storage: %.2f s (%s bytes restored)\n' \
  "$snap" "$restore" "${restored:-?}"

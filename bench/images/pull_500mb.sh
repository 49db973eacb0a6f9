#!/usr/bin/env bash
# The registry side of issue 23's pull budget (first pull of a 500 MB image from the local
# registry at 200 MB/s or more): a ~500 MB image of incompressible data in five layers, pushed to a
# registry on loopback (tools/registry, Debian's docker-registry), pulled fresh with
# `skopeo copy docker://... oci:DIR` (every blob downloaded and its digest verified, nothing
# unpacked) RUNS times (3), each into an empty directory.
#
#   bench/images/pull_500mb.sh [RUNS]
#
# The image is built once into the OCI cache's bench/ layout (beside tools/images/build-oci-images'
# layout, never pushed with the catalog's images) and reused. Prints one line per run and the
# median, then the registry alone: the same blobs fetched with curl into /dev/null.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
runs=${1:-3}
[[ $runs =~ ^[1-9][0-9]*$ ]] || { echo "RUNS: a positive number, not '$runs'" >&2; exit 2; }
layout=$("$ROOT/tools/images/build-oci-images" --cache-dir)/bench/layout
tag=500mb
layers=5
layer_mb=100

if ! umoci ls --layout "$layout" 2>/dev/null | grep -xF "$tag" >/dev/null; then
  echo "building the $((layers * layer_mb)) MB image in $layout" >&2
  mkdir -p "$(dirname "$layout")"
  [ -f "$layout/index.json" ] || umoci init --layout "$layout"
  umoci new --image "$layout:build"
  work=$(mktemp -d)
  # Each layer one file of /dev/urandom, written by GNU tar (see build-oci-images' insert_layer).
  for i in $(seq 1 "$layers"); do
    mkdir -p "$work/data"
    head -c $((layer_mb * 1024 * 1024)) /dev/urandom >"$work/data/layer-$i"
    tar -C "$work" --owner=0 --group=0 --numeric-owner -cf "$work/layer.tar" data
    umoci raw add-layer --image "$layout:build" "$work/layer.tar"
    rm -rf "$work/data" "$work/layer.tar"
  done
  rmdir "$work"
  umoci config --image "$layout:build" --config.cmd /bin/true
  umoci tag --image "$layout:build" "$tag"
  umoci rm --image "$layout:build"
fi

tmp=$(mktemp -d /tmp/gpuaas-bench-pull.XXXXXX)
trap '"$ROOT/tools/registry" stop "$tmp/registry" >/dev/null 2>&1 || true; rm -rf "$tmp"' EXIT
for _ in $(seq 1 20); do
  port=$((20000 + RANDOM % 40000))
  ss -Hltn "sport = :$port" | grep -q . && continue
  "$ROOT/tools/registry" start "$tmp/registry" "$port" 2>/dev/null && break
done
ref="127.0.0.1:$port/bench/pull:500mb"
skopeo copy -q --dest-tls-verify=false "oci:$layout:$tag" "docker://$ref"
bytes=$(skopeo inspect --tls-verify=false --raw "docker://$ref" \
          | jq '[.layers[].size, .config.size] | add')
echo "image: $ref, $((bytes / 1000000)) MB in $layers layers"

rates=()
for run in $(seq 1 "$runs"); do
  rm -rf "$tmp/pull"
  start=$(date +%s.%N)
  skopeo copy -q --src-tls-verify=false "docker://$ref" "oci:$tmp/pull:x"
  end=$(date +%s.%N)
  rate=$(echo "$bytes $start $end" | awk '{ printf "%.0f", $1 / 1e6 / ($3 - $2) }')
  echo "run $run: $(echo "$start $end" | awk '{ printf "%.2f", $2 - $1 }') s, $rate MB/s"
  rates+=("$rate")
done
median() { sort -n | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }
echo "skopeo copy median: $(printf '%s\n' "${rates[@]}" | median) MB/s"

# The registry alone: the same blobs with curl into /dev/null (no digest check, no disk write).
blobs=$(skopeo inspect --tls-verify=false --raw "docker://$ref" | jq -r '.layers[].digest')
rates=()
for run in $(seq 1 "$runs"); do
  start=$(date +%s.%N)
  for blob in $blobs; do
    curl -fs -o /dev/null "http://127.0.0.1:$port/v2/bench/pull/blobs/$blob"
  done
  end=$(date +%s.%N)
  rates+=("$(echo "$bytes $start $end" | awk '{ printf "%.0f", $1 / 1e6 / ($3 - $2) }')")
done
echo "registry alone (curl): ${rates[*]} MB/s, median $(printf '%s\n' "${rates[@]}" | median) MB/s"

#!/usr/bin/env bash
# First pull of a big image of incompressible data into the agent's image store, from Debian's
# docker-registry on loopback: time from the first request to the last layer unpacked.
#   bench/images/agent_pull.sh [BUILD_DIR] [MB] [LAYERS]     (defaults: build 500 5)
#   FILES_FROM=/usr/lib/python3 bench/images/agent_pull.sh  (one layer: a tar of that tree, for
#                                                           many small files instead of big ones)
# Needs: docker-registry, umoci, skopeo (tools/install-deps) and a built image_pull_bench.
set -euo pipefail
BUILD=${1:-build}
MB=${2:-500}
LAYERS=${3:-5}
BENCH=$BUILD/bench/images/image_pull_bench
[ -x "$BENCH" ] || { echo "build it first: ninja -C $BUILD image_pull_bench" >&2; exit 2; }

WORK=$(mktemp -d "${TMPDIR:-/var/tmp}/agent_pull.XXXXXX")
REGISTRY_PID=
cleanup() {
  if [ -n "$REGISTRY_PID" ]; then
    kill "$REGISTRY_PID" 2>/dev/null || true
    wait "$REGISTRY_PID" 2>/dev/null || true
  fi
  rm -rf "$WORK"
}
trap cleanup EXIT

PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
HOST=127.0.0.1:$PORT
cat > "$WORK/registry.yml" <<YML
version: 0.1
log: {level: warn, accesslog: {disabled: true}}
storage: {filesystem: {rootdirectory: $WORK/registry}}
http: {addr: "$HOST", secret: bench}
YML
/usr/bin/docker-registry serve "$WORK/registry.yml" >"$WORK/registry.log" 2>&1 &
REGISTRY_PID=$!
for _ in $(seq 100); do curl -fs "http://$HOST/v2/" >/dev/null && break; sleep 0.1; done

umoci init --layout "$WORK/layout"
umoci new --image "$WORK/layout:latest"
if [ -n "${FILES_FROM:-}" ]; then
  echo "building an image of $FILES_FROM ($(find "$FILES_FROM" | wc -l) entries)" >&2
  tar -C "$FILES_FROM" -cf "$WORK/files.tar" .
  umoci raw add-layer --image "$WORK/layout:latest" "$WORK/files.tar"
  rm "$WORK/files.tar"
  LAYERS=0
else
  echo "building a $MB MB image of random data in $LAYERS layers" >&2
fi
for i in $(seq "$LAYERS"); do
  mkdir -p "$WORK/layer$i/data"
  head -c "$((MB / LAYERS))M" /dev/urandom >"$WORK/layer$i/data/blob$i"
  tar -C "$WORK/layer$i" -cf "$WORK/layer$i.tar" .
  umoci raw add-layer --image "$WORK/layout:latest" "$WORK/layer$i.tar"
  rm -rf "$WORK/layer$i" "$WORK/layer$i.tar"
done
skopeo copy --quiet --dest-tls-verify=false --digestfile "$WORK/digest" \
  "oci:$WORK/layout:latest" "docker://$HOST/bench/big:latest"
rm -rf "$WORK/layout"
REFERENCE="$HOST/bench/big@$(cat "$WORK/digest")"

# The floor: skopeo alone copying the same image from the same registry. Each run starts with
# no dirty pages of the one before (sync), so neither pays for the other's writeback.
sync
start=$(date +%s%N)
skopeo copy --quiet --src-tls-verify=false "docker://$REFERENCE" "oci:$WORK/baseline:image"
echo "skopeo copy alone: $((($(date +%s%N) - start) / 1000000)) ms" >&2
rm -rf "$WORK/baseline"
sync

time "$BENCH" --root "$WORK/store" --reference "$REFERENCE" --insecure

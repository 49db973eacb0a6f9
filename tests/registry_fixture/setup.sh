#!/usr/bin/env bash
# ctest fixture `registry`, setup half: two throwaway registries (tools/registry) for a whole
# ctest run, each on a free port with its storage in a private temp dir, holding the catalog's
# images (tools/images/build-oci-images: built once into the OCI cache, so a warm run builds
# nothing) at gpuaas/<name>:<version>:
#   - an open one (no login), for the catalog's images and most tests;
#   - one that needs a login, for a tenant's images with registry credentials. docker-registry's
#     htpasswd auth covers the whole registry, so a repository that needs the login and one
#     that does not cannot share a registry.
# OUT (the build tree's test-registry/, read by tests/images/test_registry.h):
#   address, auth-address   host:port of the open and the login registry
#   credentials             USER:PASSWORD of the login registry's one user (0600; a fresh
#                           random password per run)
#   images, auth-images     "<name> <reference by tag> <reference by digest>" per image
#   dirs                    the registries' directories, for cleanup.sh
set -euo pipefail
registry=$1
build_images=$2
out=$3

mkdir -p "$out"
chmod 700 "$out"
# Registries left by an interrupted run would otherwise leak; cleanup.sh is idempotent.
"$(dirname "$0")/cleanup.sh" "$registry" "$out"

started=$SECONDS
"$build_images" >&2

# start_on_free_port DIR [--htpasswd-file FILE]: starts a registry in DIR; sets port. Another process
# may take a port between our check and the registry's bind; then start fails and we try another.
start_on_free_port() {
  local dir=$1
  shift
  for _ in $(seq 1 20); do
    port=$((20000 + RANDOM % 40000))
    ss -Hltn "sport = :$port" | grep -q . && continue
    "$registry" start "$dir" "$port" "$@" && return 0
  done
  echo "registry fixture: could not start a registry on a free port" >&2
  return 1
}

open_dir=$(mktemp -d /tmp/gpuaas-test-registry.XXXXXX)
auth_dir=$(mktemp -d /tmp/gpuaas-test-registry.XXXXXX)
printf '%s\n' "$open_dir" "$auth_dir" >"$out/dirs"

start_on_free_port "$open_dir"
"$(dirname "$0")/../common/reap_after_run.sh" "$PPID" "$open_dir" "$registry" stop "$open_dir"
echo "127.0.0.1:$port" >"$out/address"
"$registry" push "$open_dir" "$port" >"$out/images" &
open_push=$!

(umask 077 && echo "tenant:$(openssl rand -hex 16)" >"$out/credentials")
start_on_free_port "$auth_dir" --htpasswd-file "$out/credentials"
"$(dirname "$0")/../common/reap_after_run.sh" "$PPID" "$auth_dir" "$registry" stop "$auth_dir"
echo "127.0.0.1:$port" >"$out/auth-address"
"$registry" push "$auth_dir" "$port" >"$out/auth-images"
wait "$open_push"

echo "registry fixture: open $(cat "$out/address"), login $(cat "$out/auth-address")," \
  "$(wc -l <"$out/images") images each, ready in $((SECONDS - started)) s"

#!/usr/bin/env bash
# ctest fixture `registry`, cleanup half: stops the registries setup.sh started and removes them.
set -euo pipefail
registry=$1
out=$2

if [[ -f "$out/dirs" ]]; then
  while read -r dir; do
    # Only a directory setup.sh made: never one that merely got named in the file.
    [[ $dir == /tmp/gpuaas-test-registry.* && -d $dir ]] || continue
    "$registry" stop "$dir" || true
    rm -rf "$dir"
  done <"$out/dirs"
fi
rm -f "$out/dirs" "$out/address" "$out/auth-address" "$out/credentials" "$out/images" \
  "$out/auth-images"

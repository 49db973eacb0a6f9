#!/usr/bin/env bash
# ctest fixture `postgres`, cleanup half: stops the cluster setup.sh started and removes it.
set -euo pipefail
pg_cluster=$1
out=$2

if [[ -f "$out/dir" ]]; then
  dir=$(cat "$out/dir")
  if [[ -d "$dir" ]]; then
    "$pg_cluster" stop "$dir" || true
    rm -rf "$dir"
  fi
fi
rm -f "$out/dir" "$out/dsn"

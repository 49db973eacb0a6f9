#!/usr/bin/env bash
# ctest fixture `postgres`, setup half: starts a throwaway cluster on a free port in a private
# temp dir and records it in OUT (the build tree's test-pg/): OUT/dsn (superuser DSN) and
# OUT/dir (cluster dir, for cleanup.sh). Tests find OUT/dsn through GPUAAS_TEST_PG_DSN_FILE.
# The DSN names the superuser's password file (passfile=, 0600 in the cluster's 0700 dir); the
# services a test starts get roles of their own (libs/testing/service_dsn.h).
set -euo pipefail
pg_cluster=$1
out=$2

mkdir -p "$out"
# A cluster left by an interrupted run would otherwise leak; cleanup.sh is idempotent.
"$(dirname "$0")/cleanup.sh" "$pg_cluster" "$out"

# Under /tmp rather than the build tree: the postgres user must reach it, and the unix socket
# path must stay short.
dir=$(mktemp -d /tmp/gpuaas-test-pg.XXXXXX)
echo "$dir" >"$out/dir"

# Another process may take a port between our check and the server's bind; then start fails
# and we try another.
for _ in $(seq 1 20); do
  port=$((20000 + RANDOM % 40000))
  if ss -Hltn "sport = :$port" | grep -q .; then
    continue
  fi
  if dsn=$("$pg_cluster" --fast start "$dir" "$port"); then
    echo "$dsn" >"$out/dsn"
    "$(dirname "$0")/../common/reap_after_run.sh" "$PPID" "$dir" "$pg_cluster" stop "$dir"
    echo "postgres fixture: $dsn (cluster in $dir)"
    exit 0
  fi
  "$pg_cluster" stop "$dir" || true
done
echo "postgres fixture: could not start a cluster on a free port" >&2
exit 1

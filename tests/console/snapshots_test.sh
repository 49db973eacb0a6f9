#!/usr/bin/env bash
# ctest console_snapshots: a storage's Snapshots tab in headless Chromium (snapshots_test.py)
# against a dev stack that `tools/gpuaas up --storage ceph` brings up on free ports from a
# throwaway checkout (tests/devstack/stack_lib.sh), with a Ceph cluster of its own in the stack's
# state dir (the specs ceph-10g and ceph-100g on it, standard-10g on the local backend). The stack
# gets a tenant studio-s with sam (member) and vera (viewer), its storages snap-src (ceph-10g)
# and plain-1 (standard-10g), and a tenant studio-t with otto (member). Screenshots go to
# BUILD_DIR/console-screenshots/.
#   snapshots_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=../devstack/stack_lib.sh
source "$src/tests/devstack/stack_lib.sh"
# No GPU work here: no agents, so `up` is quicker.
export GPUAAS_AGENTS=0

start_stack "$tmp/up.log" --storage ceph
url=$(. "$state/stack.env" && echo "${GPUAAS_CONSOLE_URL:-}")
[ -n "$url" ] || { cat "$tmp/up.log"; fail "up recorded no GPUAAS_CONSOLE_URL in stack.env"; }

walk=$tmp/walk
mkdir -p "$walk/home"
ctl=(env HOME="$walk/home" XDG_CONFIG_HOME="$walk/config" "$build/tools/gpuaasctl/gpuaasctl")
echo "s-long-password" >"$walk/sam.pw"
echo "v-long-password" >"$walk/vera.pw"
echo "o-long-password" >"$walk/otto.pw"
(cd "$checkout" \
  && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" tenants create studio-s --display-name "Studio S" --max-storage-bytes 1Ti \
  && "${ctl[@]}" users create sam --tenant studio-s --role member --password-file "$walk/sam.pw" \
  && "${ctl[@]}" users create vera --tenant studio-s --role viewer --password-file "$walk/vera.pw" \
  && "${ctl[@]}" tenants create studio-t --display-name "Studio T" --max-storage-bytes 1Ti \
  && "${ctl[@]}" users create otto --tenant studio-t --role member --password-file "$walk/otto.pw" \
  && "${ctl[@]}" storages create snap-src --spec ceph-10g --tenant studio-s \
  && "${ctl[@]}" storages create plain-1 --spec standard-10g --tenant studio-s) \
  >"$walk/setup.txt" 2>&1 || { cat "$walk/setup.txt"; fail "stack setup through gpuaasctl"; }
# CreateStorage answers once the volume is made: both are READY now.
for storage in snap-src plain-1; do
  if ! (cd "$checkout" && "${ctl[@]}" storages get "$storage") >"$walk/$storage.txt" 2>&1 \
      || ! grep -Eq "^state: +ready$" "$walk/$storage.txt"; then
    cat "$walk/$storage.txt"
    fail "$storage is not READY"
  fi
done

/usr/bin/python3 "$here/snapshots_test.py" --url "$url" --tenant studio-s \
  --user sam --password-file "$walk/sam.pw" --viewer vera --viewer-password-file "$walk/vera.pw" \
  --other-user otto --other-password-file "$walk/otto.pw" \
  --storage snap-src --local-storage plain-1 --screenshots "$build/console-screenshots" \
  || { tail -n 30 "$state/logs/gateway.log" "$state/logs/storage.log" 2>/dev/null; fail "the Snapshots tab"; }
echo "PASS: the Snapshots tab"

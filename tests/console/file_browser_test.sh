#!/usr/bin/env bash
# ctest console_file_browser: the storage file browser in headless Chromium (file_browser_test.py)
# against a dev stack that `tools/gpuaas up` brings up on free ports from a throwaway checkout
# (tests/devstack/stack_lib.sh): its S3 endpoint answers the console's origin with CORS
# (--s3-cors-origins), and the gateway's /api/config names the endpoint. The stack gets a
# tenant studio-f with carol (member), vera (viewer) and a storage files-1. Screenshots go to
# BUILD_DIR/console-screenshots/.
#   file_browser_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)

command -v aws >/dev/null || { echo "SKIP: no aws CLI (tools/install-deps installs awscli)"; exit 0; }

# shellcheck source=../devstack/stack_lib.sh
source "$src/tests/devstack/stack_lib.sh"
# No GPU work here: no agents, so `up` is quicker.
export GPUAAS_AGENTS=0

start_stack "$tmp/up.log"
url=$(awk '$1 == "console" || $1 == "console:" { print $2; exit }' "$tmp/up.log")
[ -n "$url" ] || { cat "$tmp/up.log"; fail "up printed no console URL"; }

walk=$tmp/walk
mkdir -p "$walk/home"
ctl=(env HOME="$walk/home" XDG_CONFIG_HOME="$walk/config" "$build/tools/gpuaasctl/gpuaasctl")
echo "c-long-password" >"$walk/carol.pw"
echo "v-long-password" >"$walk/vera.pw"
(cd "$checkout" \
  && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" tenants create studio-f --display-name "Studio F" --max-storage-bytes 1Ti \
  && "${ctl[@]}" users create carol --tenant studio-f --role member --password-file "$walk/carol.pw" \
  && "${ctl[@]}" users create vera --tenant studio-f --role viewer --password-file "$walk/vera.pw" \
  && "${ctl[@]}" storages create files-1 --spec standard-10g --tenant studio-f) \
  >"$walk/setup.txt" 2>&1 || { cat "$walk/setup.txt"; fail "stack setup through gpuaasctl"; }
# CreateStorage answers once the volume is made: files-1 is READY now (gpuaasctl says "ready").
(cd "$checkout" && "${ctl[@]}" storages get files-1) >"$walk/files-1.txt" 2>&1 \
  || { cat "$walk/files-1.txt"; fail "storages get files-1"; }
grep -Eq "^state: +ready$" "$walk/files-1.txt" || { cat "$walk/files-1.txt"; fail "files-1 is not READY"; }

/usr/bin/python3 "$here/file_browser_test.py" --url "$url" --user carol \
  --password-file "$walk/carol.pw" --storage files-1 --viewer vera --viewer-password-file "$walk/vera.pw" \
  --screenshots "$build/console-screenshots" \
  || { tail -n 30 "$state/logs/gateway.log" "$state/logs/storage.log" 2>/dev/null; fail "the file browser"; }
echo "PASS: the file browser"

#!/usr/bin/env bash
# ctest console_browser: the seed's journey through the web console in headless Chromium
# (console_journey.py) against a dev stack that `tools/gpuaas up` brings up on free ports from a
# throwaway checkout (tests/devstack/stack_lib.sh). The stack gets a tenant studio-a with alice
# (tenant admin) and warm h100.1x stock, and a tenant studio-b (alice a viewer there) with an
# instance alice must not see while she acts in studio-a. Screenshots of each page go to
# BUILD_DIR/console-screenshots/.
#   console_browser_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
here=$(cd "$(dirname "$0")" && pwd)

# shellcheck source=../devstack/stack_lib.sh
source "$src/tests/devstack/stack_lib.sh"

start_stack "$tmp/up.log"
cat "$tmp/up.log"
# up prints the console's URL and records it in stack.env, beside the other addresses.
url=$(. "$state/stack.env" && echo "${GPUAAS_CONSOLE_URL:-}")
[ -n "$url" ] || fail "up recorded no GPUAAS_CONSOLE_URL in stack.env (no gateway built?)"
grep -qF "$url" "$tmp/up.log" || fail "up did not print the console URL $url"

walk=$tmp/walk
mkdir -p "$walk/home"
ctl=(env HOME="$walk/home" XDG_CONFIG_HOME="$walk/config" "$build/tools/gpuaasctl/gpuaasctl")
echo "a-long-password" >"$walk/alice.pw"
echo "b-long-password" >"$walk/bob.pw"
(cd "$checkout" \
  && "${ctl[@]}" login --user admin --password-file .gpuaas/admin-password \
  && "${ctl[@]}" tenants create studio-a --display-name "Studio A" --max-gpus 16 --max-instances 20 \
       --max-storage-bytes 1Ti \
  && "${ctl[@]}" -o json users create alice --tenant studio-a --role tenant-admin \
       --password-file "$walk/alice.pw" >"$walk/alice.json" \
  && "${ctl[@]}" tenants create studio-b --display-name "Studio B" --max-gpus 4 --max-instances 4 \
  && "${ctl[@]}" members add "$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["user_id"])' \
       "$walk/alice.json")" --tenant studio-b --role viewer \
  && "${ctl[@]}" instances create secret-1 --tenant studio-b --spec t4.1x --cmd 'sleep 600') \
  >"$walk/setup.txt" 2>&1 || { cat "$walk/setup.txt"; fail "stack setup through gpuaasctl"; }
place_stock h100.1x 2

shots=$build/console-screenshots
/usr/bin/python3 "$here/console_journey.py" --url "$url" \
  --user alice --password-file "$walk/alice.pw" \
  --admin-user admin --admin-password-file "$checkout/.gpuaas/admin-password" \
  --spec h100.1x --image jupyter --storage-spec standard-10g \
  --stock-spec a100.1x --cordon-node sim-t4-1 --tenant studio-a --other-tenant studio-b \
  --other-instance secret-1 \
  --screenshots "$shots" \
  || { tail -n 40 "$state/logs/gateway.log"; tail -n 20 "$state/logs/instance.log"
       grep -h -i -E "error|fail" "$state"/logs/agent-*.log | tail -n 20; fail "the console journey"; }

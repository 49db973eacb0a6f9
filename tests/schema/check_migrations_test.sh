#!/usr/bin/env bash
# tools/check-migrations against examples (testdata/): every bad_*.sql must be refused with a
# finding that names it, every good_*.sql accepted. One file at a time, so a bad example cannot
# hide behind another's finding.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
check=$here/../../tools/check-migrations
failed=0
for f in "$here"/testdata/bad_*.sql; do
  if out=$("$check" "$f" 2>&1); then
    echo "FAIL: accepted $(basename "$f")"; failed=1
  elif ! grep -q "^$f: " <<<"$out"; then
    echo "FAIL: refused $(basename "$f") without a finding naming it:"; echo "$out"; failed=1
  else
    echo "ok: refused $(basename "$f"): $(head -1 <<<"$out" | sed "s|^$f: ||")"
  fi
done
for f in "$here"/testdata/good_*.sql; do
  if out=$("$check" "$f" 2>&1); then
    echo "ok: accepted $(basename "$f")"
  else
    echo "FAIL: refused $(basename "$f"):"; echo "$out"; failed=1
  fi
done
exit "$failed"

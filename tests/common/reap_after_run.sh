#!/usr/bin/env bash
# reap_after_run.sh PID DIR COMMAND...: for a ctest fixture's setup. Once process PID (the ctest
# run that set the fixture up: the setup's $PPID) is gone, and DIR is still there, runs COMMAND
# and removes DIR: the fixture's cleanup never ran (the run was cancelled or killed), and its
# servers would keep running. A cleanup that did run removed DIR, and this ends with it.
# Detaches at once: ctest waits for everything holding a setup's output to close it.
set -euo pipefail
pid=$1
dir=$2
shift 2
# shellcheck disable=SC2016
setsid bash -c '
  pid=$1 dir=$2
  shift 2
  while kill -0 "$pid" 2>/dev/null && [ -e "$dir" ]; do sleep 2; done
  if [ -e "$dir" ]; then
    "$@" || true
    rm -rf "$dir"
  fi
' reap "$pid" "$dir" "$@" </dev/null >/dev/null 2>&1 &

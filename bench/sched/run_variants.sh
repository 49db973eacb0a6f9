#!/usr/bin/env bash
# Every policy on every openb variant: the paper's five pod lists next to the default one, and
# three the replay derives from the default list (sched_replay --pin). One JSON line per
# policy x workload x variant, tagged with "variant"; runs one replay at a time.
#
#   bench/sched/run_variants.sh BUILD_DIR TRACE_DIR [SEEDS] [POLICIES] > variants.jsonl
set -euo pipefail
build=${1:?usage: run_variants.sh BUILD_DIR TRACE_DIR [SEEDS] [POLICIES]}
trace=${2:?usage: run_variants.sh BUILD_DIR TRACE_DIR [SEEDS] [POLICIES]}
seeds=${3:-42-51}
policies=${4:-all}
replay="$build/bench/sched/sched_replay"
nodes="$trace/openb_node_list_gpu_node.csv"
default="$trace/openb_pod_list_default.csv"

run() {
  local variant=$1
  shift
  "$replay" --nodes "$nodes" --policy "$policies" --workload both --seeds "$seeds" --json "$@" |
    sed "s/^{/{\"variant\":\"$variant\",/"
}

for v in default cpu100 gpushare40 gpuspec10 gpuspec20 multigpu30; do
  run "$v" --pods "$trace/openb_pod_list_$v.csv"
done
# Every GPU pod pinned to one model, drawn in proportion to the GPUs that could host it.
run all-pinned --pods "$default" --pin 1
# A third of the GPU pods pinned that way.
run third-pinned --pods "$default" --pin 0.3333
# A third of the GPU pods pinned to specs drawn from gpuspec20's mix (half of them T4, which
# has 14 % of the GPUs): the shape of the variant kept apart.
run third-specmix --pods "$default" --pin 0.3333 --pin-specs "$trace/openb_pod_list_gpuspec20.csv"

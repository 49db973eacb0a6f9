#include "libs/sched/internal/node_index.h"

#include <algorithm>

namespace gpuaas::sched::internal {

int32_t NodeIndex::BucketOf(const NodeState& node) {
  if (node.whole_free > 0) {
    return kPartialBuckets + node.whole_free;
  }
  return std::min(node.max_partial / 100, kPartialBuckets - 1);
}

void NodeIndex::Erase(std::vector<NodeState>& nodes, uint32_t slot) {
  NodeState& node = nodes[slot];
  if (node.bucket < 0) {
    return;
  }
  auto& bucket = buckets_[node.model_key][node.bucket];
  const uint32_t last = bucket.back();
  bucket[node.bucket_pos] = last;
  nodes[last].bucket_pos = node.bucket_pos;
  bucket.pop_back();
  node.bucket = -1;
}

void NodeIndex::Update(std::vector<NodeState>& nodes, uint32_t slot) {
  NodeState& node = nodes[slot];
  const int32_t want = node.live && node.schedulable ? BucketOf(node) : -1;
  if (want == node.bucket) {
    return;
  }
  Erase(nodes, slot);
  if (want < 0) {
    return;
  }
  if (buckets_.size() <= static_cast<size_t>(node.model_key)) {
    buckets_.resize(node.model_key + 1);
  }
  auto& by_bucket = buckets_[node.model_key];
  if (by_bucket.size() <= static_cast<size_t>(want)) {
    by_bucket.resize(want + 1);
  }
  node.bucket = want;
  node.bucket_pos = static_cast<uint32_t>(by_bucket[want].size());
  by_bucket[want].push_back(slot);
}

}  // namespace gpuaas::sched::internal

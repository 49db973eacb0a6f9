// What a node registration must hold before the stock service stores it. Plain C++, tested in
// node_rules_test.cc; errors are INVALID_ARGUMENT naming the field ("node.gpus[2].uuid: ...").
#pragma once

#include <cstdint>

#include "absl/status/statusor.h"
#include "gpuaas/stock/v1/stock.pb.h"

namespace gpuaas::stock {

namespace pb = ::gpuaas::stock::v1;

inline constexpr int kMaxGpusPerNode = 64;

struct NodeCapacity {
  int64_t cpu_millis = 0;
  int64_t memory_bytes = 0;
  int64_t disk_bytes = 0;
};

// node_id: 1 to 253 characters of a DNS name ([a-z0-9.-], starting and ending alphanumeric);
// hostname and agent_version: display text; at most kMaxGpusPerNode GPUs, each with a unique
// printable uuid, a model, memory >= 0, MIG only on a model that has MIG; labels with
// [a-zA-Z0-9._/-] keys up to 63 and display-text values; cpu, memory and disk quantities.
absl::StatusOr<NodeCapacity> ValidateNodeRegistration(const pb::Node& node);

}  // namespace gpuaas::stock

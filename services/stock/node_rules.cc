#include "services/stock/node_rules.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "libs/common/quantity.h"
#include "libs/common/status_macros.h"
#include "libs/sched/mig.h"
#include "libs/service/validate.h"

namespace gpuaas::stock {
namespace {

bool IsLowerAlnum(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9'); }

absl::Status ValidateGpu(const std::string& field, const pb::Gpu& gpu) {
  const std::string& uuid = gpu.uuid();
  if (uuid.empty() || uuid.size() > 96 ||
      !std::all_of(uuid.begin(), uuid.end(), [](char c) { return c > ' ' && c < 0x7f; })) {
    return service::InvalidField(field + ".uuid", "1 to 96 printable characters");
  }
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired(field + ".model", gpu.model()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText(field + ".model", gpu.model()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateNonNegative(field + ".memory_mib", gpu.memory_mib()));
  if (gpu.mig_enabled() && sched::FindMigGeometry(gpu.model()) == nullptr) {
    return service::InvalidField(field + ".mig_enabled",
                                 absl::StrCat("model ", gpu.model(), " has no MIG"));
  }
  return absl::OkStatus();
}

absl::Status ValidateLabel(const std::string& key, const std::string& value) {
  const std::string field = absl::StrCat("node.labels[", key.substr(0, 63), "]");
  if (key.empty() || key.size() > 63 || !std::all_of(key.begin(), key.end(), [](char c) {
        return IsLowerAlnum(c) || (c >= 'A' && c <= 'Z') || c == '.' || c == '_' || c == '/' ||
               c == '-';
      })) {
    return service::InvalidField(field, "keys are 1 to 63 characters of [a-zA-Z0-9._/-]");
  }
  return service::ValidateDisplayText(field, value);
}

}  // namespace

absl::StatusOr<NodeCapacity> ValidateNodeRegistration(const pb::Node& node) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node.node_id", node.node_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("node.hostname", node.hostname()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("node.agent_version", node.agent_version()));
  if (node.gpus_size() > kMaxGpusPerNode) {
    return service::InvalidField("node.gpus", absl::StrCat("at most ", kMaxGpusPerNode));
  }
  absl::flat_hash_set<std::string> uuids;
  for (int i = 0; i < node.gpus_size(); ++i) {
    const std::string field = absl::StrCat("node.gpus[", i, "]");
    GPUAAS_RETURN_IF_ERROR(ValidateGpu(field, node.gpus(i)));
    if (!uuids.insert(node.gpus(i).uuid()).second) {
      return service::InvalidField(field + ".uuid", "duplicate");
    }
  }
  for (const auto& [key, value] : node.labels()) {
    GPUAAS_RETURN_IF_ERROR(ValidateLabel(key, value));
  }
  NodeCapacity c;
  GPUAAS_ASSIGN_OR_RETURN(c.cpu_millis, ParseCpuMillis("node.cpu", node.cpu()));
  GPUAAS_ASSIGN_OR_RETURN(c.memory_bytes, ParseBytes("node.memory", node.memory()));
  GPUAAS_ASSIGN_OR_RETURN(c.disk_bytes, ParseBytes("node.disk", node.disk()));
  return c;
}

}  // namespace gpuaas::stock

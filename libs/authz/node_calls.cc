#include "libs/authz/node_calls.h"

#include <string>

#include "libs/common/status_macros.h"

namespace gpuaas::authz {

// Our abseil's StrCat takes absl::string_view, which is not std::string_view here.
std::string NodeAudience(std::string_view node_id) { return "node:" + std::string(node_id); }

absl::Status RequireMintAgentToken(const Principal& p) {
  GPUAAS_RETURN_IF_ERROR(RequirePower(p, Power::kServiceCalls, "minting agent-call tokens"));
  if (!p.audience.empty()) {
    return absl::PermissionDeniedError(
        "permission denied: a token minted for a node's agent mints nothing");
  }
  return absl::OkStatus();
}

absl::Status RequireAgentCall(const Principal& p, std::string_view node_id,
                              std::string_view purpose) {
  if (p.audience.empty() || p.audience != NodeAudience(node_id)) {
    return absl::PermissionDeniedError(
        "permission denied: only a token minted for this node's agent calls it");
  }
  if (p.purpose != purpose) {
    return absl::PermissionDeniedError(
        "permission denied: this token was minted for another call than " + std::string(purpose));
  }
  return RequirePower(p, Power::kServiceCalls, "calling a node's agent");
}

}  // namespace gpuaas::authz

// IssueNodeToken: the credential the control plane sends to one node's agent for one call.
#include <algorithm>
#include <optional>
#include <string>

#include "libs/authz/node_calls.h"
#include "libs/common/ids.h"
#include "libs/common/proto_time.h"
#include "libs/common/status_macros.h"
#include "libs/service/validate.h"
#include "services/auth/auth.h"

namespace gpuaas::auth {
namespace {

// The claim each purpose is minted as; nullopt for a purpose the agents do not know.
std::optional<std::string_view> PurposeClaim(pb::AgentCallPurpose purpose) {
  switch (purpose) {
    case pb::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS:
      return authz::kPurposeReadWorkloadLogs;
    case pb::AGENT_CALL_PURPOSE_EXEC_WORKLOAD:
      return authz::kPurposeExecWorkload;
    case pb::AGENT_CALL_PURPOSE_FORWARD_WORKLOAD_PORT:
      return authz::kPurposeForwardWorkloadPort;
    default:
      return std::nullopt;
  }
}

}  // namespace

absl::Status Auth::IssueNodeToken(const Principal& p, const pb::IssueNodeTokenRequest& req,
                                  pb::IssueNodeTokenResponse& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node_id", req.node_id()));
  const std::optional<std::string_view> purpose = PurposeClaim(req.purpose());
  if (!purpose) return service::InvalidField("purpose", "unknown agent call");
  GPUAAS_RETURN_IF_ERROR(authz::RequireMintAgentToken(p));
  // SERVICE whoever asks (a platform admin too): the agent needs service calls, nothing more,
  // and no tenant. The audience keeps it from every other verifier.
  authz::Claims claims;
  claims.iss = options_.issuer;
  claims.sub = p.user_id;
  claims.role = common::v1::ROLE_SERVICE;
  claims.iat = clock_.Now();
  claims.exp = claims.iat + std::min(options_.node_token_ttl, options_.access_token_ttl);
  claims.jti = NewId("jti_");
  claims.aud = authz::NodeAudience(req.node_id());
  claims.purpose = std::string(*purpose);
  GPUAAS_ASSIGN_OR_RETURN(std::string token, keys_.Sign(claims));
  out.set_access_token(std::move(token));
  *out.mutable_expire_time() = ToProtoTime(claims.exp);
  return absl::OkStatus();
}

}  // namespace gpuaas::auth

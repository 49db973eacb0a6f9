// Calls the control plane makes to a node's agent (issue 32: nodes are untrusted). Whatever an
// agent is sent, a program that took its port, or its node's thief, may keep and replay. So such
// a call never carries a credential that acts beyond that node's own work: the auth service
// mints, for a holder of service calls only, a short-lived token naming the node (its audience,
// "node:<id>") and the one call it makes (its purpose). Every service, the proxy and the auth
// service verify with no audience and so refuse it (verifier.h); an agent verifies with its own
// node's audience, so refuses every other token, and checks the purpose (RequireAgentCall).
//
//   mint:    RequireMintAgentToken(caller)            (auth: NodeTokenService.IssueNodeToken)
//   accept:  RequireAgentCall(p, own_node, kPurposeReadWorkloadLogs)   (the agent)
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "libs/authz/principal.h"

namespace gpuaas::authz {

// The agent calls there are, as a token's "purpose" claim names them.
inline constexpr std::string_view kPurposeReadWorkloadLogs = "read_workload_logs";
inline constexpr std::string_view kPurposeExecWorkload = "exec_workload";
inline constexpr std::string_view kPurposeForwardWorkloadPort = "forward_workload_port";

// "node:<node_id>": the audience of the tokens minted for `node_id`'s agent.
std::string NodeAudience(std::string_view node_id);

// The caller may have agent-call tokens minted: it holds Power::kServiceCalls (the instance
// service's SERVICE key, a platform admin) and is not itself such a token. Machine roles never
// may: a node's key mints nothing for another node. Error: PERMISSION_DENIED.
absl::Status RequireMintAgentToken(const Principal& p);

// `p` is a token minted for `purpose` on node `node_id`'s agent: audience NodeAudience(node_id),
// that purpose, a role holding Power::kServiceCalls. The agent's verifier already refused every
// other audience; this checks again and adds the purpose. Error: PERMISSION_DENIED.
absl::Status RequireAgentCall(const Principal& p, std::string_view node_id,
                              std::string_view purpose);

}  // namespace gpuaas::authz

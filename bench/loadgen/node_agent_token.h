// A token of one node's own agent, for the benchmarks that play many agents: only a node's agent
// makes its node calls (issue 22), so each simulated node gets a ROLE_NODE_AGENT key bound to it,
// made by the platform admin and exchanged at once.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "libs/client/auth_client.h"

namespace gpuaas::bench {

// Makes the key with `admin_token` (a platform admin's) and returns the token it exchanges for.
// Blocks on two auth calls. Errors: those of CreateApiKey and ExchangeApiKey.
absl::StatusOr<std::string> NodeAgentToken(const client::AuthClient& auth,
                                           const std::string& admin_token,
                                           const std::string& node_id);

}  // namespace gpuaas::bench

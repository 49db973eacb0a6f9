#include "bench/loadgen/node_agent_token.h"

#include "libs/client/call_context.h"
#include "libs/common/status_macros.h"

namespace gpuaas::bench {

absl::StatusOr<std::string> NodeAgentToken(const client::AuthClient& auth,
                                           const std::string& admin_token,
                                           const std::string& node_id) {
  auth::v1::CreateApiKeyRequest create;
  create.set_name("bench agent " + node_id);
  create.set_role(common::v1::ROLE_NODE_AGENT);
  create.set_node_id(node_id);
  client::CallContext as_admin;
  as_admin.set_bearer_token(admin_token);
  GPUAAS_ASSIGN_OR_RETURN(auth::v1::CreateApiKeyResponse key, auth.CreateApiKey(create, as_admin));
  auth::v1::ExchangeApiKeyRequest exchange;
  exchange.set_secret(key.secret());
  GPUAAS_ASSIGN_OR_RETURN(auth::v1::ExchangeApiKeyResponse token, auth.ExchangeApiKey(exchange));
  return token.access_token();
}

}  // namespace gpuaas::bench

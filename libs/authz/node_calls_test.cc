#include "libs/authz/node_calls.h"

#include <gtest/gtest.h>

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::ROLE_ACCESS_PROXY;
using ::gpuaas::common::v1::ROLE_MEMBER;
using ::gpuaas::common::v1::ROLE_NODE_AGENT;
using ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_SERVICE;
using ::gpuaas::common::v1::ROLE_TENANT_ADMIN;
using ::gpuaas::common::v1::ROLE_VIEWER;

Principal Make(Role role, std::string audience = "", std::string_view purpose = "") {
  Principal p;
  p.user_id = "usr_1";
  p.role = role;
  p.audience = std::move(audience);
  p.purpose = std::string(purpose);
  if (role == ROLE_NODE_AGENT) p.node_id = "node-a";
  if (IsTenantRole(role)) p.tenant_id = "ten-a";
  return p;
}

TEST(NodeAudience, NamesTheNode) { EXPECT_EQ(NodeAudience("node-a"), "node:node-a"); }

// Only holders of service calls have agent-call tokens minted; never a node, the proxy, a
// tenant's people, nor a token that was itself minted for a node.
TEST(RequireMintAgentToken, OnlyServiceCallers) {
  EXPECT_TRUE(RequireMintAgentToken(Make(ROLE_SERVICE)).ok());
  EXPECT_TRUE(RequireMintAgentToken(Make(ROLE_PLATFORM_ADMIN)).ok());
  for (Role r : {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_NODE_AGENT, ROLE_ACCESS_PROXY}) {
    EXPECT_EQ(RequireMintAgentToken(Make(r)).code(), absl::StatusCode::kPermissionDenied)
        << RoleName(r);
  }
  EXPECT_EQ(
      RequireMintAgentToken(Make(ROLE_SERVICE, "node:node-a", kPurposeReadWorkloadLogs)).code(),
      absl::StatusCode::kPermissionDenied);
}

// Each caller × the agent of node-a reading workload logs.
TEST(RequireAgentCall, OnlyATokenMintedForThisNodeAndCall) {
  const auto kOk = absl::StatusCode::kOk;
  const auto kDenied = absl::StatusCode::kPermissionDenied;
  struct Case {
    const char* what;
    Principal p;
    absl::StatusCode want;
  };
  const Case kCases[] = {
      {"minted for node-a's logs", Make(ROLE_SERVICE, "node:node-a", kPurposeReadWorkloadLogs),
       kOk},
      {"minted for node-b", Make(ROLE_SERVICE, "node:node-b", kPurposeReadWorkloadLogs), kDenied},
      {"minted for another call", Make(ROLE_SERVICE, "node:node-a", "run_workloads"), kDenied},
      {"the service's own token", Make(ROLE_SERVICE), kDenied},
      {"a platform admin's own token", Make(ROLE_PLATFORM_ADMIN), kDenied},
      {"node-a's own key", Make(ROLE_NODE_AGENT), kDenied},
      {"a member with the audience", Make(ROLE_MEMBER, "node:node-a", kPurposeReadWorkloadLogs),
       kDenied},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(RequireAgentCall(c.p, "node-a", kPurposeReadWorkloadLogs).code(), c.want) << c.what;
  }
}

}  // namespace
}  // namespace gpuaas::authz

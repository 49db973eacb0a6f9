#include "libs/authz/principal.h"

#include <gtest/gtest.h>

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::ROLE_ACCESS_PROXY;
using ::gpuaas::common::v1::ROLE_MEMBER;
using ::gpuaas::common::v1::ROLE_NODE_AGENT;
using ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_SERVICE;
using ::gpuaas::common::v1::ROLE_TENANT_ADMIN;
using ::gpuaas::common::v1::ROLE_UNSPECIFIED;
using ::gpuaas::common::v1::ROLE_VIEWER;

Principal Make(Role role, std::string tenant = "ten_a") {
  Principal p;
  p.user_id = "usr_1";
  p.tenant_id = std::move(tenant);
  p.role = role;
  return p;
}

struct RoleCase {
  Role have;
  Role need;
  bool allowed;
};

TEST(RequireRole, Table) {
  const RoleCase kCases[] = {
      {ROLE_VIEWER, ROLE_VIEWER, true},
      {ROLE_VIEWER, ROLE_MEMBER, false},
      {ROLE_VIEWER, ROLE_TENANT_ADMIN, false},
      {ROLE_MEMBER, ROLE_VIEWER, true},
      {ROLE_MEMBER, ROLE_MEMBER, true},
      {ROLE_MEMBER, ROLE_TENANT_ADMIN, false},
      {ROLE_TENANT_ADMIN, ROLE_VIEWER, true},
      {ROLE_TENANT_ADMIN, ROLE_MEMBER, true},
      {ROLE_TENANT_ADMIN, ROLE_TENANT_ADMIN, true},
      {ROLE_TENANT_ADMIN, ROLE_PLATFORM_ADMIN, false},
      {ROLE_TENANT_ADMIN, ROLE_SERVICE, false},
      {ROLE_PLATFORM_ADMIN, ROLE_VIEWER, true},
      {ROLE_PLATFORM_ADMIN, ROLE_TENANT_ADMIN, true},
      {ROLE_PLATFORM_ADMIN, ROLE_PLATFORM_ADMIN, true},
      {ROLE_PLATFORM_ADMIN, ROLE_SERVICE, true},
      {ROLE_SERVICE, ROLE_VIEWER, true},
      {ROLE_SERVICE, ROLE_MEMBER, true},
      {ROLE_SERVICE, ROLE_TENANT_ADMIN, false},
      {ROLE_SERVICE, ROLE_PLATFORM_ADMIN, false},
      {ROLE_SERVICE, ROLE_SERVICE, true},
      {ROLE_MEMBER, ROLE_SERVICE, false},
      {ROLE_UNSPECIFIED, ROLE_VIEWER, false},
      {ROLE_UNSPECIFIED, ROLE_UNSPECIFIED, false},
      {ROLE_VIEWER, ROLE_UNSPECIFIED, true},
      {static_cast<Role>(42), ROLE_VIEWER, false},
      {ROLE_PLATFORM_ADMIN, static_cast<Role>(42), false},
      {ROLE_TENANT_ADMIN, static_cast<Role>(42), false},
  };
  for (const RoleCase& c : kCases) {
    absl::Status s = RequireRole(Make(c.have), c.need);
    EXPECT_EQ(s.ok(), c.allowed) << RoleName(c.have) << " needs " << RoleName(c.need);
    if (!c.allowed) {
      EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied);
    }
  }
}

TEST(RequireRole, MessageNamesTheRole) {
  absl::Status s = RequireRole(Make(ROLE_VIEWER), ROLE_TENANT_ADMIN);
  EXPECT_EQ(s.message(), "permission denied: requires role TENANT_ADMIN");
}

TEST(RequirePlatformAdmin, OnlyPlatformAdmin) {
  EXPECT_TRUE(RequirePlatformAdmin(Make(ROLE_PLATFORM_ADMIN, "")).ok());
  for (Role r : {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_SERVICE, ROLE_UNSPECIFIED}) {
    absl::Status s = RequirePlatformAdmin(Make(r));
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << RoleName(r);
    EXPECT_NE(s.message().find("PLATFORM_ADMIN"), std::string::npos);
  }
}

TEST(RequireTenant, OwnTenantOnlyUnlessGlobal) {
  EXPECT_TRUE(RequireTenant(Make(ROLE_VIEWER, "ten_a"), "ten_a", "instance").ok());
  absl::Status other = RequireTenant(Make(ROLE_TENANT_ADMIN, "ten_a"), "ten_b", "instance");
  EXPECT_EQ(other.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(other.message(), "instance not found");
  EXPECT_EQ(RequireTenant(Make(ROLE_MEMBER, ""), "", "storage").code(),
            absl::StatusCode::kNotFound);
  EXPECT_TRUE(RequireTenant(Make(ROLE_PLATFORM_ADMIN, ""), "ten_b", "instance").ok());
  EXPECT_TRUE(RequireTenant(Make(ROLE_SERVICE, ""), "ten_b", "instance").ok());
}

TEST(Principal, GlobalRoles) {
  EXPECT_TRUE(Make(ROLE_PLATFORM_ADMIN).IsGlobal());
  EXPECT_TRUE(Make(ROLE_PLATFORM_ADMIN).IsPlatformAdmin());
  EXPECT_TRUE(Make(ROLE_SERVICE).IsGlobal());
  EXPECT_FALSE(Make(ROLE_SERVICE).IsPlatformAdmin());
  EXPECT_FALSE(Make(ROLE_TENANT_ADMIN).IsGlobal());
}

TEST(RoleNames, RoundTrip) {
  for (Role r : {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_PLATFORM_ADMIN, ROLE_SERVICE}) {
    EXPECT_EQ(RoleFromName(RoleName(r)), r);
  }
  EXPECT_EQ(RoleName(ROLE_TENANT_ADMIN), "TENANT_ADMIN");
  EXPECT_EQ(RoleFromName("ROLE_UNSPECIFIED"), std::nullopt);
  EXPECT_EQ(RoleFromName("tenant_admin"), std::nullopt);
  EXPECT_EQ(RoleFromName(""), std::nullopt);
}

TEST(RequireNode, ANodeAgentActsForItsOwnNodeOnly) {
  Principal agent = Make(ROLE_NODE_AGENT, "");
  agent.node_id = "node-a";
  EXPECT_TRUE(RequireNode(agent, "node-a", "heartbeats").ok());
  EXPECT_EQ(RequireNode(agent, "node-b", "heartbeats").code(), absl::StatusCode::kPermissionDenied);
  agent.node_id.clear();  // no valid token lacks it; fail closed anyway
  EXPECT_EQ(RequireNode(agent, "", "heartbeats").code(), absl::StatusCode::kPermissionDenied);
  // Nobody else makes node calls: not the services' key, not a person, not even an admin.
  for (Role r : {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_SERVICE, ROLE_PLATFORM_ADMIN,
                 ROLE_ACCESS_PROXY}) {
    EXPECT_EQ(RequireNode(Make(r), "node-a", "heartbeats").code(),
              absl::StatusCode::kPermissionDenied);
  }
}

TEST(RequireRole, MachineRolesReadNothing) {
  for (Role r : {ROLE_NODE_AGENT, ROLE_ACCESS_PROXY}) {
    EXPECT_EQ(RequireRole(Make(r, ""), ROLE_UNSPECIFIED).code(),
              absl::StatusCode::kPermissionDenied);
    EXPECT_EQ(RequireTenant(Make(r, ""), "ten_a", "storage").code(), absl::StatusCode::kNotFound);
  }
}

}  // namespace
}  // namespace gpuaas::authz

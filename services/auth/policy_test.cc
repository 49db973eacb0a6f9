// The auth service's permission decisions, without a database.
#include "services/auth/policy.h"

#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"

namespace gpuaas::auth {
namespace {

using common::v1::Role;
using common::v1::ROLE_ACCESS_PROXY;
using common::v1::ROLE_MEMBER;
using common::v1::ROLE_NODE_AGENT;
using common::v1::ROLE_PLATFORM_ADMIN;
using common::v1::ROLE_SERVICE;
using common::v1::ROLE_TENANT_ADMIN;
using common::v1::ROLE_UNSPECIFIED;
using common::v1::ROLE_VIEWER;
using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;

authz::Principal Caller(Role role, std::string tenant = "alpha", std::string user = "usr_me") {
  authz::Principal p;
  p.user_id = std::move(user);
  p.tenant_id = std::move(tenant);
  p.role = role;
  return p;
}

TEST(ApiKeyRole, TheEscalationIsRefused) {
  // A SERVICE principal acting in a tenant must not mint a key that manages its people.
  EXPECT_THAT(ApiKeyRole(Caller(ROLE_SERVICE), ROLE_TENANT_ADMIN),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(ApiKeyRole(Caller(ROLE_SERVICE), ROLE_MEMBER), IsOkAndHolds(ROLE_MEMBER));
  EXPECT_THAT(ApiKeyRole(Caller(ROLE_SERVICE), ROLE_UNSPECIFIED), IsOkAndHolds(ROLE_SERVICE));
}

TEST(ApiKeyRole, GrantMatrix) {
  const Role kRoles[] = {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_SERVICE,
                         ROLE_PLATFORM_ADMIN};
  // Rows: creator; columns as kRoles. A creator grants exactly what it holds all powers of.
  const bool kAllowed[5][5] = {
      {true, false, false, false, false},  // VIEWER
      {true, true, false, false, false},   // MEMBER
      {true, true, true, false, false},    // TENANT_ADMIN
      {true, true, false, true, false},    // SERVICE
      {true, true, true, true, true},      // PLATFORM_ADMIN
  };
  for (int c = 0; c < 5; ++c) {
    for (int r = 0; r < 5; ++r) {
      absl::StatusOr<Role> got = ApiKeyRole(Caller(kRoles[c]), kRoles[r]);
      if (kAllowed[c][r]) {
        EXPECT_THAT(got, IsOkAndHolds(kRoles[r])) << c << " grants " << r;
      } else {
        EXPECT_THAT(got, StatusIs(absl::StatusCode::kPermissionDenied)) << c << " grants " << r;
      }
    }
  }
}

TEST(ApiKeyRole, TenantRoleNeedsATenant) {
  // A platform admin logged in without a tenant cannot mint a MEMBER key for no tenant.
  EXPECT_THAT(ApiKeyRole(Caller(ROLE_PLATFORM_ADMIN, ""), ROLE_MEMBER),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  EXPECT_THAT(ApiKeyRole(Caller(ROLE_PLATFORM_ADMIN, ""), ROLE_SERVICE),
              IsOkAndHolds(ROLE_SERVICE));
  EXPECT_THAT(ApiKeyRole(Caller(ROLE_PLATFORM_ADMIN, "alpha"), ROLE_MEMBER),
              IsOkAndHolds(ROLE_MEMBER));
}

TEST(ApiKeyRole, UnknownRoleIsInvalid) {
  EXPECT_THAT(ApiKeyRole(Caller(ROLE_PLATFORM_ADMIN), static_cast<Role>(42)),
              StatusIs(absl::StatusCode::kInvalidArgument, "role: unknown role"));
}

// Only a platform admin makes a machine's key; not the services' key, not a machine itself.
TEST(ApiKeyRole, MachineKeysArePlatformAdminsOnly) {
  for (Role maker : {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_SERVICE, ROLE_NODE_AGENT,
                     ROLE_ACCESS_PROXY}) {
    for (Role machine : {ROLE_NODE_AGENT, ROLE_ACCESS_PROXY}) {
      EXPECT_THAT(ApiKeyRole(Caller(maker, ""), machine),
                  StatusIs(absl::StatusCode::kPermissionDenied));
    }
  }
  // A machine asking for "its own role" again is refused too.
  EXPECT_THAT(ApiKeyRole(Caller(ROLE_NODE_AGENT, ""), ROLE_UNSPECIFIED),
              StatusIs(absl::StatusCode::kPermissionDenied));
  const authz::Principal admin = Caller(ROLE_PLATFORM_ADMIN, "");
  EXPECT_THAT(ApiKeyRole(admin, ROLE_NODE_AGENT), IsOkAndHolds(ROLE_NODE_AGENT));
  EXPECT_THAT(ApiKeyRole(admin, ROLE_ACCESS_PROXY), IsOkAndHolds(ROLE_ACCESS_PROXY));
}

TEST(ApiKeyNode, OnlyANodeAgentsKeyIsBound) {
  EXPECT_TRUE(ApiKeyNode(ROLE_NODE_AGENT, "node-a").ok());
  EXPECT_TRUE(ApiKeyNode(ROLE_ACCESS_PROXY, "").ok());
  EXPECT_TRUE(ApiKeyNode(ROLE_SERVICE, "").ok());
  EXPECT_THAT(
      ApiKeyNode(ROLE_NODE_AGENT, ""),
      StatusIs(absl::StatusCode::kInvalidArgument, "node_id: required for a ROLE_NODE_AGENT key"));
  EXPECT_THAT(ApiKeyNode(ROLE_SERVICE, "node-a"), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ApiKeyNode(ROLE_MEMBER, "node-a"), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(HasSelfRights, OnlyTheUserLoggedIn) {
  EXPECT_TRUE(HasSelfRights(Caller(ROLE_VIEWER, "alpha", "usr_me"), "usr_me"));
  EXPECT_FALSE(HasSelfRights(Caller(ROLE_VIEWER, "alpha", "usr_me"), "usr_you"));
  authz::Principal from_key = Caller(ROLE_PLATFORM_ADMIN, "alpha", "usr_me");
  from_key.api_key_id = "gak_1";
  EXPECT_FALSE(HasSelfRights(from_key, "usr_me"));
}

TEST(MayManageKey, CreatorTenantPeopleManagersAndPlatformAdmins) {
  auth::v1::ApiKey key;
  key.set_tenant_id("alpha");
  key.set_user_id("usr_owner");
  key.set_role(ROLE_MEMBER);
  EXPECT_TRUE(MayManageKey(Caller(ROLE_VIEWER, "alpha", "usr_owner"), key));
  EXPECT_FALSE(MayManageKey(Caller(ROLE_MEMBER), key));
  EXPECT_TRUE(MayManageKey(Caller(ROLE_TENANT_ADMIN), key));
  EXPECT_FALSE(MayManageKey(Caller(ROLE_TENANT_ADMIN, "beta"), key));
  EXPECT_FALSE(MayManageKey(Caller(ROLE_SERVICE), key));
  EXPECT_TRUE(MayManageKey(Caller(ROLE_PLATFORM_ADMIN, ""), key));
  key.set_role(ROLE_SERVICE);  // a service key made in alpha: beyond its tenant admin
  EXPECT_FALSE(MayManageKey(Caller(ROLE_TENANT_ADMIN), key));
  authz::Principal owner_via_key = Caller(ROLE_VIEWER, "alpha", "usr_owner");
  owner_via_key.api_key_id = "gak_2";
  EXPECT_FALSE(MayManageKey(owner_via_key, key));
}

TEST(RequireGrantable, TenantAdminGrantsTenantRolesOnly) {
  EXPECT_OK(RequireGrantable(Caller(ROLE_TENANT_ADMIN), ROLE_TENANT_ADMIN));
  EXPECT_THAT(RequireGrantable(Caller(ROLE_TENANT_ADMIN), ROLE_SERVICE),
              StatusIs(absl::StatusCode::kPermissionDenied));
  EXPECT_THAT(RequireGrantable(Caller(ROLE_SERVICE), ROLE_TENANT_ADMIN),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

}  // namespace
}  // namespace gpuaas::auth

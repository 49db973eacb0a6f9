#include "libs/authz/principal.h"

#include <gtest/gtest.h>

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::MEMBER;
using ::gpuaas::common::v1::PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_UNSPECIFIED;
using ::gpuaas::common::v1::SERVICE;
using ::gpuaas::common::v1::TENANT_ADMIN;
using ::gpuaas::common::v1::VIEWER;

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
      {VIEWER, VIEWER, true},
      {VIEWER, MEMBER, false},
      {VIEWER, TENANT_ADMIN, false},
      {MEMBER, VIEWER, true},
      {MEMBER, MEMBER, true},
      {MEMBER, TENANT_ADMIN, false},
      {TENANT_ADMIN, VIEWER, true},
      {TENANT_ADMIN, MEMBER, true},
      {TENANT_ADMIN, TENANT_ADMIN, true},
      {TENANT_ADMIN, PLATFORM_ADMIN, false},
      {TENANT_ADMIN, SERVICE, false},
      {PLATFORM_ADMIN, VIEWER, true},
      {PLATFORM_ADMIN, TENANT_ADMIN, true},
      {PLATFORM_ADMIN, PLATFORM_ADMIN, true},
      {PLATFORM_ADMIN, SERVICE, true},
      {SERVICE, VIEWER, true},
      {SERVICE, MEMBER, true},
      {SERVICE, TENANT_ADMIN, false},
      {SERVICE, PLATFORM_ADMIN, false},
      {SERVICE, SERVICE, true},
      {MEMBER, SERVICE, false},
      {ROLE_UNSPECIFIED, VIEWER, false},
      {ROLE_UNSPECIFIED, ROLE_UNSPECIFIED, false},
      {VIEWER, ROLE_UNSPECIFIED, true},
      {static_cast<Role>(42), VIEWER, false},
      {PLATFORM_ADMIN, static_cast<Role>(42), true},
      {TENANT_ADMIN, static_cast<Role>(42), false},
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
  absl::Status s = RequireRole(Make(VIEWER), TENANT_ADMIN);
  EXPECT_EQ(s.message(), "permission denied: requires role TENANT_ADMIN");
}

TEST(RequirePlatformAdmin, OnlyPlatformAdmin) {
  EXPECT_TRUE(RequirePlatformAdmin(Make(PLATFORM_ADMIN, "")).ok());
  for (Role r : {VIEWER, MEMBER, TENANT_ADMIN, SERVICE, ROLE_UNSPECIFIED}) {
    absl::Status s = RequirePlatformAdmin(Make(r));
    EXPECT_EQ(s.code(), absl::StatusCode::kPermissionDenied) << RoleName(r);
    EXPECT_NE(s.message().find("PLATFORM_ADMIN"), std::string::npos);
  }
}

TEST(RequireTenant, OwnTenantOnlyUnlessGlobal) {
  EXPECT_TRUE(RequireTenant(Make(VIEWER, "ten_a"), "ten_a", "instance").ok());
  absl::Status other = RequireTenant(Make(TENANT_ADMIN, "ten_a"), "ten_b", "instance");
  EXPECT_EQ(other.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(other.message(), "instance not found");
  EXPECT_EQ(RequireTenant(Make(MEMBER, ""), "", "storage").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(RequireTenant(Make(PLATFORM_ADMIN, ""), "ten_b", "instance").ok());
  EXPECT_TRUE(RequireTenant(Make(SERVICE, ""), "ten_b", "instance").ok());
}

TEST(Principal, GlobalRoles) {
  EXPECT_TRUE(Make(PLATFORM_ADMIN).IsGlobal());
  EXPECT_TRUE(Make(PLATFORM_ADMIN).IsPlatformAdmin());
  EXPECT_TRUE(Make(SERVICE).IsGlobal());
  EXPECT_FALSE(Make(SERVICE).IsPlatformAdmin());
  EXPECT_FALSE(Make(TENANT_ADMIN).IsGlobal());
}

TEST(RoleNames, RoundTrip) {
  for (Role r : {VIEWER, MEMBER, TENANT_ADMIN, PLATFORM_ADMIN, SERVICE}) {
    EXPECT_EQ(RoleFromName(RoleName(r)), r);
  }
  EXPECT_EQ(RoleName(TENANT_ADMIN), "TENANT_ADMIN");
  EXPECT_EQ(RoleFromName("ROLE_UNSPECIFIED"), std::nullopt);
  EXPECT_EQ(RoleFromName("tenant_admin"), std::nullopt);
  EXPECT_EQ(RoleFromName(""), std::nullopt);
}

}  // namespace
}  // namespace gpuaas::authz

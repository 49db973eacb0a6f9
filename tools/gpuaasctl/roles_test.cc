#include "tools/gpuaasctl/roles.h"

#include <gtest/gtest.h>

namespace gpuaas::ctl {
namespace {

namespace pb = ::gpuaas::common::v1;

TEST(ParseRoleTest, AcceptsEveryNameInAnyCase) {
  EXPECT_EQ(*ParseRole("tenant-admin"), pb::ROLE_TENANT_ADMIN);
  EXPECT_EQ(*ParseRole("TENANT_ADMIN"), pb::ROLE_TENANT_ADMIN);
  EXPECT_EQ(*ParseRole("Tenant-Admin"), pb::ROLE_TENANT_ADMIN);
  EXPECT_EQ(*ParseRole("member"), pb::ROLE_MEMBER);
  EXPECT_EQ(*ParseRole("VIEWER"), pb::ROLE_VIEWER);
  EXPECT_EQ(*ParseRole("platform_admin"), pb::ROLE_PLATFORM_ADMIN);
  EXPECT_EQ(*ParseRole(" service "), pb::ROLE_SERVICE);
  EXPECT_EQ(*ParseRole("ROLE_TENANT_ADMIN"), pb::ROLE_TENANT_ADMIN);
  EXPECT_EQ(*ParseRole("role-viewer"), pb::ROLE_VIEWER);
}

TEST(ParseRoleTest, RejectsUnknownAndUnspecified) {
  for (std::string_view bad :
       {"", "admin", "role_unspecified", "unspecified", "3", "tenantadmin", "role-"}) {
    absl::StatusOr<Role> r = ParseRole(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("tenant-admin"), std::string_view::npos);
  }
}

TEST(RoleDisplayNameTest, RoundTripsThroughParse) {
  for (Role r : {pb::ROLE_VIEWER, pb::ROLE_MEMBER, pb::ROLE_TENANT_ADMIN, pb::ROLE_PLATFORM_ADMIN,
                 pb::ROLE_SERVICE}) {
    EXPECT_EQ(*ParseRole(RoleDisplayName(r)), r);
  }
  EXPECT_EQ(RoleDisplayName(pb::ROLE_UNSPECIFIED), "");
  EXPECT_EQ(RoleDisplayName(static_cast<Role>(42)), "42");
}

}  // namespace
}  // namespace gpuaas::ctl

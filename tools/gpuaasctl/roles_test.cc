#include "tools/gpuaasctl/roles.h"

#include <gtest/gtest.h>

namespace gpuaas::ctl {
namespace {

namespace pb = ::gpuaas::common::v1;

TEST(ParseRoleTest, AcceptsEveryNameInAnyCase) {
  EXPECT_EQ(*ParseRole("tenant-admin"), pb::TENANT_ADMIN);
  EXPECT_EQ(*ParseRole("TENANT_ADMIN"), pb::TENANT_ADMIN);
  EXPECT_EQ(*ParseRole("Tenant-Admin"), pb::TENANT_ADMIN);
  EXPECT_EQ(*ParseRole("member"), pb::MEMBER);
  EXPECT_EQ(*ParseRole("VIEWER"), pb::VIEWER);
  EXPECT_EQ(*ParseRole("platform_admin"), pb::PLATFORM_ADMIN);
  EXPECT_EQ(*ParseRole(" service "), pb::SERVICE);
}

TEST(ParseRoleTest, RejectsUnknownAndUnspecified) {
  for (std::string_view bad : {"", "admin", "role_unspecified", "unspecified", "3", "tenantadmin"}) {
    absl::StatusOr<Role> r = ParseRole(bad);
    ASSERT_FALSE(r.ok()) << bad;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(r.status().message().find("tenant-admin"), std::string_view::npos);
  }
}

TEST(RoleDisplayNameTest, RoundTripsThroughParse) {
  for (Role r : {pb::VIEWER, pb::MEMBER, pb::TENANT_ADMIN, pb::PLATFORM_ADMIN, pb::SERVICE}) {
    EXPECT_EQ(*ParseRole(RoleDisplayName(r)), r);
  }
  EXPECT_EQ(RoleDisplayName(pb::ROLE_UNSPECIFIED), "");
  EXPECT_EQ(RoleDisplayName(static_cast<Role>(42)), "42");
}

}  // namespace
}  // namespace gpuaas::ctl

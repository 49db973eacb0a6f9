#include "libs/authz/tenant_scope.h"

#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"

namespace gpuaas::authz {
namespace {

using gpuaas::testing::IsOkAndHolds;
using gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

Principal Caller(common::v1::Role role, std::string tenant) {
  return Principal{.user_id = "usr_1", .tenant_id = std::move(tenant), .role = role};
}

TEST(TenantScopeTest, TenantRolesReadTheirTenantGlobalRolesEveryTenant) {
  EXPECT_THAT(TenantScope(Caller(common::v1::ROLE_VIEWER, "alpha")), IsOkAndHolds("alpha"));
  EXPECT_THAT(TenantScope(Caller(common::v1::ROLE_SERVICE, "")), IsOkAndHolds(""));
  EXPECT_THAT(TenantScope(Caller(common::v1::ROLE_PLATFORM_ADMIN, "alpha")), IsOkAndHolds(""));
  // Never "every tenant" for a tenant role, whatever its token says.
  EXPECT_THAT(TenantScope(Caller(common::v1::ROLE_MEMBER, "")),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

TEST(TenantScopeTest, NewResourcesGoToTheNamedOrTheTokensTenant) {
  EXPECT_THAT(TargetTenant(Caller(common::v1::ROLE_MEMBER, "alpha"), ""), IsOkAndHolds("alpha"));
  EXPECT_THAT(TargetTenant(Caller(common::v1::ROLE_MEMBER, "alpha"), "alpha"),
              IsOkAndHolds("alpha"));
  EXPECT_THAT(TargetTenant(Caller(common::v1::ROLE_MEMBER, "alpha"), "beta"),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(TargetTenant(Caller(common::v1::ROLE_SERVICE, ""), "beta"), IsOkAndHolds("beta"));
  EXPECT_THAT(TargetTenant(Caller(common::v1::ROLE_SERVICE, "alpha"), ""), IsOkAndHolds("alpha"));
  EXPECT_THAT(TargetTenant(Caller(common::v1::ROLE_PLATFORM_ADMIN, ""), ""),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tenant_id")));
}

}  // namespace
}  // namespace gpuaas::authz

#include "libs/authz/workload_access.h"

#include <gtest/gtest.h>

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::ROLE_MEMBER;
using ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_SERVICE;
using ::gpuaas::common::v1::ROLE_TENANT_ADMIN;
using ::gpuaas::common::v1::ROLE_UNSPECIFIED;
using ::gpuaas::common::v1::ROLE_VIEWER;

Principal Make(Role role, std::string tenant) {
  Principal p;
  p.user_id = "usr_1";
  p.tenant_id = std::move(tenant);
  p.role = role;
  return p;
}

// Each role × the instance's tenant × another tenant.
TEST(AuthorizeWorkloadAccess, TokenMatrix) {
  const auto kOk = absl::StatusCode::kOk;
  const auto kDenied = absl::StatusCode::kPermissionDenied;
  const auto kNotFound = absl::StatusCode::kNotFound;
  struct Case {
    Role role;
    std::string caller_tenant;
    absl::StatusCode want;
  };
  const Case kCases[] = {
      {ROLE_VIEWER, "ten-a", kDenied},
      {ROLE_VIEWER, "ten-b", kNotFound},
      {ROLE_MEMBER, "ten-a", kOk},
      {ROLE_MEMBER, "ten-b", kNotFound},
      {ROLE_TENANT_ADMIN, "ten-a", kOk},
      {ROLE_TENANT_ADMIN, "ten-b", kNotFound},
      {ROLE_SERVICE, "", kOk},
      {ROLE_PLATFORM_ADMIN, "", kOk},
      {ROLE_UNSPECIFIED, "ten-a", kDenied},
      {ROLE_MEMBER, "", kNotFound},
  };
  for (const Case& c : kCases) {
    EXPECT_EQ(AuthorizeWorkloadAccess(Make(c.role, c.caller_tenant), "ten-a").code(), c.want)
        << RoleName(c.role) << " of '" << c.caller_tenant << "'";
  }
}

TEST(AuthorizeWorkloadAccess, AnotherTenantLooksLikeNoInstance) {
  absl::Status s = AuthorizeWorkloadAccess(Make(ROLE_MEMBER, "ten-b"), "ten-a");
  EXPECT_EQ(s.message(), "instance not found");
}

TEST(AuthorizeWorkloadAccess, GrantOnlyForItsOwnInstancePortAndTenant) {
  const WorkloadGrant grant{
      .instance_id = "web-1", .port = 8080, .tenant_id = "ten-a", .user_id = "usr_1"};
  EXPECT_TRUE(AuthorizeWorkloadAccess(grant, "web-1", 8080, "ten-a").ok());
  EXPECT_EQ(AuthorizeWorkloadAccess(grant, "web-2", 8080, "ten-a").code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ(AuthorizeWorkloadAccess(grant, "web-1", 8081, "ten-a").code(),
            absl::StatusCode::kNotFound);
  // The id came back for another tenant's instance (deleted, then created again).
  EXPECT_EQ(AuthorizeWorkloadAccess(grant, "web-1", 8080, "ten-b").code(),
            absl::StatusCode::kNotFound);
  WorkloadGrant no_tenant = grant;
  no_tenant.tenant_id.clear();
  EXPECT_EQ(AuthorizeWorkloadAccess(no_tenant, "web-1", 8080, "").code(),
            absl::StatusCode::kNotFound);
}

}  // namespace
}  // namespace gpuaas::authz

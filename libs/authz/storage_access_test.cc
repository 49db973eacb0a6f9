#include "libs/authz/storage_access.h"

#include <gtest/gtest.h>

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::ROLE_MEMBER;
using ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_SERVICE;
using ::gpuaas::common::v1::ROLE_TENANT_ADMIN;
using ::gpuaas::common::v1::ROLE_VIEWER;

Principal Make(Role role, std::string tenant) {
  Principal p;
  p.user_id = "usr_1";
  p.tenant_id = std::move(tenant);
  p.role = role;
  return p;
}

struct TokenCase {
  Role role;
  std::string caller_tenant;
  DataAction action;
  absl::StatusCode want;
};

// Each role × own tenant × another tenant, for reading and writing.
TEST(AuthorizeStorageData, TokenMatrix) {
  using enum DataAction;
  const auto kOk = absl::StatusCode::kOk;
  const auto kDenied = absl::StatusCode::kPermissionDenied;
  const auto kNotFound = absl::StatusCode::kNotFound;
  const TokenCase kCases[] = {
      {ROLE_VIEWER, "ten-a", kList, kOk},
      {ROLE_VIEWER, "ten-a", kRead, kOk},
      {ROLE_VIEWER, "ten-a", kWrite, kDenied},
      {ROLE_VIEWER, "ten-b", kRead, kNotFound},
      {ROLE_MEMBER, "ten-a", kRead, kOk},
      {ROLE_MEMBER, "ten-a", kWrite, kOk},
      {ROLE_MEMBER, "ten-b", kWrite, kNotFound},
      {ROLE_TENANT_ADMIN, "ten-a", kWrite, kOk},
      {ROLE_TENANT_ADMIN, "ten-b", kRead, kNotFound},
      {ROLE_SERVICE, "", kWrite, kOk},
      {ROLE_PLATFORM_ADMIN, "", kWrite, kOk},
  };
  for (const TokenCase& c : kCases) {
    EXPECT_EQ(AuthorizeStorageData(Make(c.role, c.caller_tenant), "ten-a", c.action).code(), c.want)
        << RoleName(c.role) << " of " << c.caller_tenant << " action "
        << static_cast<int>(c.action);
  }
}

TEST(AuthorizeStorageData, GrantIsScopedToOneStorage) {
  const StorageGrant rw{.storage_id = "stg-1", .tenant_id = "ten-a", .read_only = false};
  const StorageGrant ro{.storage_id = "stg-1", .tenant_id = "ten-a", .read_only = true};
  EXPECT_TRUE(AuthorizeStorageData(rw, "stg-1", DataAction::kWrite).ok());
  EXPECT_TRUE(AuthorizeStorageData(ro, "stg-1", DataAction::kRead).ok());
  EXPECT_EQ(AuthorizeStorageData(ro, "stg-1", DataAction::kWrite).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(AuthorizeStorageData(rw, "stg-2", DataAction::kRead).code(),
            absl::StatusCode::kNotFound);
}

// The instance's tenant and bound identity against the storage found under its storage_id.
TEST(AuthorizeStorageMount, OnlyTheBoundStorageOfTheInstancesTenant) {
  const StorageIdentity kBound{.tenant_id = "ten-b", .storage_uid = "vol_b"};
  EXPECT_TRUE(AuthorizeStorageMount(kBound, {.tenant_id = "ten-b", .storage_uid = "vol_b"}).ok());
  // The id reused by another tenant after the bound storage was deleted.
  EXPECT_EQ(AuthorizeStorageMount(kBound, {.tenant_id = "ten-a", .storage_uid = "vol_a"}).code(),
            absl::StatusCode::kNotFound);
  // Reused by the same tenant: still another storage.
  EXPECT_EQ(AuthorizeStorageMount(kBound, {.tenant_id = "ten-b", .storage_uid = "vol_c"}).code(),
            absl::StatusCode::kNotFound);
  // Another tenant's storage, whatever identity is claimed.
  EXPECT_EQ(AuthorizeStorageMount(kBound, {.tenant_id = "ten-a", .storage_uid = "vol_b"}).code(),
            absl::StatusCode::kNotFound);
  // No tenant named: nothing is the caller's.
  EXPECT_EQ(AuthorizeStorageMount({.storage_uid = "vol_b"},
                                  {.tenant_id = "ten-b", .storage_uid = "vol_b"})
                .code(),
            absl::StatusCode::kNotFound);
  // An instance created before identities: its tenant decides.
  EXPECT_TRUE(
      AuthorizeStorageMount({.tenant_id = "ten-b"}, {.tenant_id = "ten-b", .storage_uid = "x"})
          .ok());
  EXPECT_EQ(
      AuthorizeStorageMount({.tenant_id = "ten-b"}, {.tenant_id = "ten-a", .storage_uid = "x"})
          .code(),
      absl::StatusCode::kNotFound);
}

// The mount credential of an attachment on node-1: its agent only.
TEST(AuthorizeMountCredential, Matrix) {
  const auto kOk = absl::StatusCode::kOk;
  const auto kDenied = absl::StatusCode::kPermissionDenied;
  const auto kNotFound = absl::StatusCode::kNotFound;
  struct Case {
    Role role;
    std::string tenant;
    std::string node;
    absl::StatusCode want;
  };
  const Case kCases[] = {
      {::gpuaas::common::v1::ROLE_NODE_AGENT, "", "node-1", kOk},
      {::gpuaas::common::v1::ROLE_NODE_AGENT, "", "node-2", kNotFound},
      {::gpuaas::common::v1::ROLE_NODE_AGENT, "", "", kNotFound},
      {::gpuaas::common::v1::ROLE_ACCESS_PROXY, "", "", kDenied},
      {::gpuaas::common::v1::ROLE_GATEWAY, "", "", kDenied},
      {ROLE_SERVICE, "", "", kDenied},
      {ROLE_PLATFORM_ADMIN, "", "", kDenied},
      {ROLE_TENANT_ADMIN, "ten-a", "", kDenied},
      {ROLE_MEMBER, "ten-a", "", kDenied},
      {ROLE_VIEWER, "ten-a", "", kDenied},
  };
  for (const Case& c : kCases) {
    Principal p = Make(c.role, c.tenant);
    p.node_id = c.node;
    EXPECT_EQ(AuthorizeMountCredential(p, "node-1").code(), c.want)
        << RoleName(c.role) << " node " << c.node;
    // No such attachment: agents learn no more than they do of another node's; others are
    // refused before anything is looked up.
    EXPECT_EQ(AuthorizeMountCredential(p, std::nullopt).code(),
              c.want == kDenied ? kDenied : kNotFound)
        << RoleName(c.role);
  }
}

}  // namespace
}  // namespace gpuaas::authz

// Tenant groups: one gid per tenant from the range, kept in the file across agents, never
// handed to a second tenant; bad tenant ids and a spent range fail saying why.
#include "services/agent/runtime/tenant_groups.h"

#include <gtest/gtest.h>

#include "libs/testing/temp_dir.h"

namespace gpuaas::agent {
namespace {

TEST(TenantGroupsTest, EachTenantKeepsItsOwnGidAcrossAgents) {
  gpuaas::testing::TempDir dir;
  const std::string file = (dir.path() / "tenant-gids").string();
  {
    TenantGroups groups(file, 310000, 310001);
    EXPECT_EQ(groups.GidOf("t1").value(), 310000u);
    EXPECT_EQ(groups.GidOf("t2").value(), 310001u);
    EXPECT_EQ(groups.GidOf("t1").value(), 310000u);
  }
  TenantGroups again(file, 310000, 310001);  // the agent restarts
  EXPECT_EQ(again.GidOf("t2").value(), 310001u);
  const absl::StatusOr<gid_t> spent = again.GidOf("t3");
  EXPECT_EQ(spent.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(spent.status().message(), "no free tenant gid in 310000-310001");
}

TEST(TenantGroupsTest, AnEmptyOrSpacedTenantIdIsRefusedNamingTheField) {
  gpuaas::testing::TempDir dir;
  TenantGroups groups((dir.path() / "tenant-gids").string(), 310000, 310009);
  for (const char* bad : {"", "t 1", "t\n1"}) {
    const absl::StatusOr<gid_t> gid = groups.GidOf(bad);
    EXPECT_EQ(gid.status().code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(gid.status().message().rfind("tenant_id: ", 0), 0u) << gid.status();
  }
}

}  // namespace
}  // namespace gpuaas::agent

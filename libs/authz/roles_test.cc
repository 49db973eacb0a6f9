// The role model's grant matrix, spelled out in full so a change to any power shows up here.
#include "libs/authz/roles.h"

#include <gtest/gtest.h>

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::ROLE_ACCESS_PROXY;
using ::gpuaas::common::v1::ROLE_GATEWAY;
using ::gpuaas::common::v1::ROLE_MEMBER;
using ::gpuaas::common::v1::ROLE_NODE_AGENT;
using ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_SERVICE;
using ::gpuaas::common::v1::ROLE_TENANT_ADMIN;
using ::gpuaas::common::v1::ROLE_UNSPECIFIED;
using ::gpuaas::common::v1::ROLE_VIEWER;

constexpr Role kUnknown = static_cast<Role>(42);

TEST(MayGrant, Matrix) {
  // Rows: holder; columns: granted VIEWER, MEMBER, TENANT_ADMIN, SERVICE, PLATFORM_ADMIN.
  const Role kGranted[] = {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_SERVICE,
                           ROLE_PLATFORM_ADMIN};
  struct Row {
    Role holder;
    bool may[5];
  };
  const Row kRows[] = {
      {ROLE_VIEWER, {true, false, false, false, false}},
      {ROLE_MEMBER, {true, true, false, false, false}},
      {ROLE_TENANT_ADMIN, {true, true, true, false, false}},
      {ROLE_SERVICE, {true, true, false, true, false}},
      {ROLE_PLATFORM_ADMIN, {true, true, true, true, true}},
      {ROLE_UNSPECIFIED, {false, false, false, false, false}},
      {kUnknown, {false, false, false, false, false}},
  };
  for (const Row& row : kRows) {
    for (int i = 0; i < 5; ++i) {
      EXPECT_EQ(MayGrant(row.holder, kGranted[i]), row.may[i])
          << RoleName(row.holder) << " grants " << RoleName(kGranted[i]);
    }
    EXPECT_FALSE(MayGrant(row.holder, ROLE_UNSPECIFIED)) << RoleName(row.holder);
    EXPECT_FALSE(MayGrant(row.holder, kUnknown)) << RoleName(row.holder);
  }
}

TEST(MayGrant, ServiceNeverManagesPeople) {
  EXPECT_FALSE(Holds(ROLE_SERVICE, Power::kManagePeople));
  EXPECT_FALSE(MayGrant(ROLE_SERVICE, ROLE_TENANT_ADMIN));
  EXPECT_FALSE(Holds(Meet(ROLE_SERVICE, ROLE_TENANT_ADMIN), Power::kManagePeople));
}

TEST(Meet, StaysWithinBoth) {
  EXPECT_EQ(Meet(ROLE_SERVICE, ROLE_TENANT_ADMIN), ROLE_MEMBER);
  EXPECT_EQ(Meet(ROLE_TENANT_ADMIN, ROLE_SERVICE), ROLE_MEMBER);
  EXPECT_EQ(Meet(ROLE_PLATFORM_ADMIN, ROLE_TENANT_ADMIN), ROLE_TENANT_ADMIN);
  EXPECT_EQ(Meet(ROLE_PLATFORM_ADMIN, ROLE_SERVICE), ROLE_SERVICE);
  EXPECT_EQ(Meet(ROLE_MEMBER, ROLE_TENANT_ADMIN), ROLE_MEMBER);
  EXPECT_EQ(Meet(ROLE_VIEWER, ROLE_SERVICE), ROLE_VIEWER);
  EXPECT_EQ(Meet(ROLE_UNSPECIFIED, ROLE_MEMBER), ROLE_UNSPECIFIED);
  EXPECT_EQ(Meet(kUnknown, ROLE_PLATFORM_ADMIN), ROLE_UNSPECIFIED);
  // Whatever the pair, the meet is grantable by both.
  const Role kAll[] = {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_SERVICE,
                       ROLE_PLATFORM_ADMIN};
  for (Role a : kAll) {
    for (Role b : kAll) {
      const Role m = Meet(a, b);
      EXPECT_TRUE(MayGrant(a, m) && MayGrant(b, m)) << RoleName(a) << " ^ " << RoleName(b);
    }
  }
}

TEST(Roles, Kinds) {
  for (Role r : {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN}) {
    EXPECT_TRUE(IsTenantRole(r));
    EXPECT_FALSE(IsGlobalRole(r));
  }
  for (Role r : {ROLE_SERVICE, ROLE_PLATFORM_ADMIN}) {
    EXPECT_FALSE(IsTenantRole(r));
    EXPECT_TRUE(IsGlobalRole(r));
  }
  EXPECT_FALSE(IsTenantRole(ROLE_UNSPECIFIED));
  EXPECT_FALSE(IsGlobalRole(ROLE_UNSPECIFIED));
}

TEST(Roles, WeakestHolder) {
  EXPECT_EQ(WeakestHolder(Power::kRead), ROLE_VIEWER);
  EXPECT_EQ(WeakestHolder(Power::kUse), ROLE_MEMBER);
  EXPECT_EQ(WeakestHolder(Power::kManagePeople), ROLE_TENANT_ADMIN);
  EXPECT_EQ(WeakestHolder(Power::kServiceCalls), ROLE_SERVICE);
  EXPECT_EQ(WeakestHolder(Power::kPlatform), ROLE_PLATFORM_ADMIN);
}

// The machine roles hold only their own calls: no tenant power, nothing of each other's, and no
// tenant role ever meets down to one.
TEST(Roles, MachineRoles) {
  for (Role r : {ROLE_NODE_AGENT, ROLE_ACCESS_PROXY, ROLE_GATEWAY}) {
    EXPECT_TRUE(IsMachineRole(r));
    EXPECT_FALSE(IsTenantRole(r) || IsGlobalRole(r));
    for (Power p : {Power::kRead, Power::kUse, Power::kManagePeople, Power::kAnyTenant,
                    Power::kServiceCalls, Power::kPlatform}) {
      EXPECT_FALSE(Holds(r, p)) << RoleName(r);
    }
    EXPECT_EQ(RoleFromName(RoleName(r)), r);
    EXPECT_EQ(Meet(ROLE_PLATFORM_ADMIN, r), r);
    for (Role t : {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN}) {
      EXPECT_FALSE(MayGrant(t, r));
      EXPECT_EQ(Meet(t, r), ROLE_UNSPECIFIED);
    }
  }
  EXPECT_TRUE(Holds(ROLE_NODE_AGENT, Power::kNodeCalls));
  EXPECT_FALSE(Holds(ROLE_NODE_AGENT, Power::kAccessCalls));
  EXPECT_TRUE(Holds(ROLE_ACCESS_PROXY, Power::kAccessCalls));
  EXPECT_FALSE(Holds(ROLE_ACCESS_PROXY, Power::kNodeCalls));
  EXPECT_EQ(Meet(ROLE_NODE_AGENT, ROLE_ACCESS_PROXY), ROLE_UNSPECIFIED);
  EXPECT_EQ(WeakestHolder(Power::kNodeCalls), ROLE_NODE_AGENT);
  EXPECT_EQ(WeakestHolder(Power::kAccessCalls), ROLE_ACCESS_PROXY);
  // The gateway only vouches for client addresses: none of the other machines' calls.
  EXPECT_TRUE(Holds(ROLE_GATEWAY, Power::kForwardClientAddress));
  EXPECT_FALSE(Holds(ROLE_GATEWAY, Power::kNodeCalls) || Holds(ROLE_GATEWAY, Power::kAccessCalls));
  EXPECT_EQ(WeakestHolder(Power::kForwardClientAddress), ROLE_GATEWAY);
}

// Each machine's calls have one holder, its own key: the services' key and the platform admin
// (a person) hold neither, yet the admin still mints both, and nothing else does.
TEST(Roles, OnlyTheMachinesHoldTheirCalls) {
  for (Role r : {ROLE_VIEWER, ROLE_MEMBER, ROLE_TENANT_ADMIN, ROLE_SERVICE, ROLE_PLATFORM_ADMIN}) {
    EXPECT_FALSE(Holds(r, Power::kNodeCalls)) << RoleName(r);
    EXPECT_FALSE(Holds(r, Power::kAccessCalls)) << RoleName(r);
    // Not even the platform admin may name a login's client address: the throttle counts by it.
    EXPECT_FALSE(Holds(r, Power::kForwardClientAddress)) << RoleName(r);
  }
  for (Role machine : {ROLE_NODE_AGENT, ROLE_ACCESS_PROXY, ROLE_GATEWAY}) {
    EXPECT_TRUE(MayGrant(ROLE_PLATFORM_ADMIN, machine));
    EXPECT_FALSE(MayGrant(ROLE_SERVICE, machine));
    EXPECT_FALSE(MayGrant(machine, machine));  // a machine never mints another
    EXPECT_EQ(Meet(machine, ROLE_PLATFORM_ADMIN), machine);
    EXPECT_EQ(Meet(ROLE_SERVICE, machine), ROLE_UNSPECIFIED);  // its maker lost the admin
  }
  EXPECT_EQ(Meet(ROLE_NODE_AGENT, ROLE_ACCESS_PROXY), ROLE_UNSPECIFIED);
}

}  // namespace
}  // namespace gpuaas::authz

#include "libs/service/update_mask.h"

#include <gtest/gtest.h>

#include "gpuaas/auth/v1/auth.pb.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::service {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

google::protobuf::FieldMask Mask(std::initializer_list<const char*> paths) {
  google::protobuf::FieldMask m;
  for (const char* p : paths) {
    m.add_paths(p);
  }
  return m;
}

auth::v1::Tenant Stored() {
  auth::v1::Tenant t;
  t.set_tenant_id("alpha");
  t.set_display_name("Alpha");
  t.mutable_quota()->set_max_gpus(4);
  t.mutable_quota()->set_max_instances(10);
  return t;
}

TEST(UpdateMask, EmptyMaskMeansEveryAllowedField) {
  absl::StatusOr<UpdateMask> mask = UpdateMask::Parse(Mask({}), {"display_name", "quota"});
  ASSERT_OK(mask.status());
  EXPECT_TRUE(mask->Touches("display_name"));
  EXPECT_TRUE(mask->Touches("quota.max_gpus"));
  auth::v1::Tenant in;
  in.set_display_name("New");
  auth::v1::Tenant t = Stored();
  mask->Apply(in, t);
  EXPECT_EQ(t.display_name(), "New");
  EXPECT_EQ(t.quota().max_gpus(), 0);  // the whole quota was replaced
  EXPECT_EQ(t.tenant_id(), "alpha");   // not updatable: untouched
}

TEST(UpdateMask, SubFieldTouchesOnlyItself) {
  absl::StatusOr<UpdateMask> mask =
      UpdateMask::Parse(Mask({"quota.max_gpus"}), {"display_name", "quota"});
  ASSERT_OK(mask.status());
  EXPECT_TRUE(mask->Touches("quota"));
  EXPECT_FALSE(mask->Touches("display_name"));
  EXPECT_FALSE(mask->Touches("quota.max_instances"));
  auth::v1::Tenant in;
  in.set_display_name("ignored");
  in.mutable_quota()->set_max_gpus(16);
  auth::v1::Tenant t = Stored();
  mask->Apply(in, t);
  EXPECT_EQ(t.display_name(), "Alpha");
  EXPECT_EQ(t.quota().max_gpus(), 16);
  EXPECT_EQ(t.quota().max_instances(), 10);
}

TEST(UpdateMask, UnknownOrForbiddenPathNamesTheAllowedOnes) {
  EXPECT_THAT(UpdateMask::Parse(Mask({"tenant_id"}), {"display_name", "quota"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       "update_mask: unknown field 'tenant_id'; allowed: display_name, quota"));
  EXPECT_THAT(UpdateMask::Parse(Mask({"quotas"}), {"quota"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'quotas'")));
}

TEST(UpdateMask, RequestLevelPathsAreSkippedByApply) {
  absl::StatusOr<UpdateMask> mask =
      UpdateMask::Parse(Mask({"password", "display_name"}), {"display_name", "password"});
  ASSERT_OK(mask.status());
  EXPECT_TRUE(mask->Touches("password"));
  auth::v1::User in;
  in.set_display_name("Bob");
  auth::v1::User u;
  mask->Apply(in, u);
  EXPECT_EQ(u.display_name(), "Bob");
}

}  // namespace
}  // namespace gpuaas::service

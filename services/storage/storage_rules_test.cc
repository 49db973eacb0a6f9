#include "services/storage/storage_rules.h"

#include <gtest/gtest.h>

#include <set>

#include "libs/testing/status_matchers.h"

namespace gpuaas::storage {
namespace {

using gpuaas::testing::IsOkAndHolds;
using gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

pb::StorageSpec Spec() {
  pb::StorageSpec s;
  s.set_spec_name("ssd-100g");
  s.set_size("100Gi");
  s.set_max_files(1'000'000);
  s.set_price_per_gb_hour_micros(50);
  return s;
}

absl::Status Invalid(const pb::StorageSpec& s) { return CanonicalSpec("spec", s).status(); }

TEST(StorageRulesTest, CanonicalSpecParsesAndNormalises) {
  pb::StorageSpec s = Spec();
  s.set_size("102400Mi");
  ASSERT_OK_AND_ASSIGN(pb::StorageSpec c, CanonicalSpec("spec", s));
  EXPECT_EQ(c.size(), "100Gi");
  EXPECT_EQ(c.size_bytes(), int64_t{100} << 30);
  EXPECT_EQ(c.backend_class(), "local");
  s.set_backend_class("ceph");
  EXPECT_THAT(CanonicalSpec("spec", s)->backend_class(), "ceph");
}

TEST(StorageRulesTest, CanonicalSpecNamesTheBadField) {
  pb::StorageSpec s = Spec();
  s.set_spec_name("Bad_Name");
  EXPECT_THAT(Invalid(s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.spec_name")));
  s = Spec();
  s.clear_size();
  EXPECT_THAT(Invalid(s), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.size")));
  s.set_size("-1Gi");
  EXPECT_THAT(Invalid(s), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.size")));
  s.set_size("1.5");
  EXPECT_THAT(Invalid(s), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.size")));
  s = Spec();
  s.set_max_files(0);
  EXPECT_THAT(Invalid(s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.max_files")));
  s = Spec();
  s.set_price_per_gb_hour_micros(-1);
  EXPECT_THAT(Invalid(s), StatusIs(absl::StatusCode::kInvalidArgument,
                                   HasSubstr("spec.price_per_gb_hour_micros")));
  s = Spec();
  s.set_backend_class("Not A Class");
  EXPECT_THAT(Invalid(s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.backend_class")));
  s = Spec();
  s.set_description(std::string(257, 'x'));
  EXPECT_THAT(Invalid(s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("spec.description")));
}

TEST(StorageRulesTest, StorageIdsAreBucketNames) {
  EXPECT_OK(ValidateStorageId("storage_id", "models-2024"));
  for (const char* bad :
       {"", "ab", "Models", "models_x", "models.x", "-models", "models-", "1models"}) {
    EXPECT_THAT(ValidateStorageId("storage_id", bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("storage_id")))
        << bad;
  }
  EXPECT_OK(ValidateStorageId("storage_id", NewStorageId()));
  EXPECT_NE(NewStorageId(), NewStorageId());
}

TEST(StorageRulesTest, StorageUidsAreNeverStorageIds) {
  EXPECT_FALSE(ValidateStorageId("storage_id", NewStorageUid()).ok());
  EXPECT_NE(NewStorageUid(), NewStorageUid());
}

TEST(StorageRulesTest, AccessKeysHaveAwsShapes) {
  std::set<std::string> ids, secrets;
  for (int i = 0; i < 100; ++i) {
    const std::string id = NewAccessKeyId();
    EXPECT_EQ(id.size(), 20u);
    EXPECT_OK(ValidateAccessKeyId("access_key_id", id));
    ids.insert(id);
    const std::string secret = NewSecretAccessKey();
    EXPECT_EQ(secret.size(), 40u);
    EXPECT_EQ(secret.find_first_not_of(
                  "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"),
              std::string::npos)
        << secret;
    secrets.insert(secret);
  }
  EXPECT_EQ(ids.size(), 100u);
  EXPECT_EQ(secrets.size(), 100u);
  for (const char* bad :
       {"AKIAIOSFODNN7EXAMPLE", "GK", "GKAAAAAAAAAAAAAAAAA1", "gkaaaaaaaaaaaaaaaaaa"}) {
    EXPECT_THAT(ValidateAccessKeyId("access_key_id", bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("access_key_id")))
        << bad;
  }
}

TEST(StorageRulesTest, AccessorTtlDefaultsAndBounds) {
  google::protobuf::Duration ttl;
  EXPECT_THAT(AccessorTtl("ttl", ttl), IsOkAndHolds(kDefaultAccessorTtl));
  ttl.set_seconds(3600);
  EXPECT_THAT(AccessorTtl("ttl", ttl), IsOkAndHolds(absl::Hours(1)));
  ttl.set_seconds(30 * 24 * 3600);
  EXPECT_THAT(AccessorTtl("ttl", ttl), IsOkAndHolds(kMaxAccessorTtl));
  ttl.set_seconds(30 * 24 * 3600 + 1);
  EXPECT_THAT(AccessorTtl("ttl", ttl),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ttl")));
  ttl.set_seconds(-5);
  EXPECT_THAT(AccessorTtl("ttl", ttl), StatusIs(absl::StatusCode::kInvalidArgument));
  ttl.set_seconds(5);
  ttl.set_nanos(1);
  EXPECT_THAT(AccessorTtl("ttl", ttl),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("whole seconds")));
}

TEST(StorageRulesTest, InstanceIds) {
  EXPECT_OK(ValidateInstanceId("instance_id", "ins_abc"));
  EXPECT_THAT(ValidateInstanceId("instance_id", ""), StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(ValidateInstanceId("instance_id", std::string(129, 'a')),
              StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(MountAttachmentId, StableHexAndDistinctPerPair) {
  const std::string id = MountAttachmentId("stu_1", "inst-1");
  EXPECT_EQ(id.size(), 32u);
  EXPECT_EQ(id.find_first_not_of("0123456789abcdef"), std::string::npos);
  EXPECT_EQ(id, MountAttachmentId("stu_1", "inst-1"));
  EXPECT_NE(id, MountAttachmentId("stu_2", "inst-1"));
  EXPECT_NE(id, MountAttachmentId("stu_1", "inst-2"));
  EXPECT_NE(MountAttachmentId("a", "bc"), MountAttachmentId("ab", "c"));
}

}  // namespace
}  // namespace gpuaas::storage

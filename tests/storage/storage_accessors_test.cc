// Accessors over real gRPC, read back through the S3 Directory the data plane uses: the secret
// shown once and stored only sealed, keys that reach exactly one storage, revocation at once,
// lifetimes, and buckets as the data plane sees them. Those that reach the storage's volume (a
// key's one storage, its storage deleted, buckets and their sizes) run on local and on ceph.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "absl/time/clock.h"
#include "libs/common/proto_time.h"
#include "tests/storage/storage_test_base.h"

namespace gpuaas::storage::testing {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::MatchesRegex;
using ::testing::StartsWith;

class StorageAccessorsTest : public StorageTest {
 protected:
  StorageAccessorsTest() = default;
  explicit StorageAccessorsTest(VolumeBackend backend) : StorageTest(backend) {}

  void SetUp() override {
    StorageTest::SetUp();
    if (IsSkipped()) return;
    CreateSpec("ssd-1g", "1Gi", 100);
    ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
    ASSERT_TRUE(CreateStorage(beta_, "theirs", "ssd-1g").ok());
  }

  // The accessor's row as stored, every column as text.
  std::string StoredRow(const std::string& access_key_id) {
    std::string row;
    EXPECT_OK(storage_->pool().RunInTransaction("test.row", [&](db::Tx& tx) {
      std::optional<db::Row> r =
          tx.Exec("SELECT a::text FROM storage.accessors a WHERE access_key_id = $1", access_key_id)
              .First();
      row = r ? r->Get<std::string>(0) : "";
      return absl::OkStatus();
    }));
    return row;
  }
  std::string StoredSecret(const std::string& access_key_id) {
    std::string sealed;
    EXPECT_OK(storage_->pool().RunInTransaction("test.sealed", [&](db::Tx& tx) {
      std::optional<db::Row> r =
          tx.Exec("SELECT secret_sealed FROM storage.accessors WHERE access_key_id = $1",
                  access_key_id)
              .First();
      sealed = r ? r->GetBytes(0) : "";
      return absl::OkStatus();
    }));
    return sealed;
  }
};

class StorageAccessorsOnEachBackendTest : public StorageAccessorsTest,
                                          public ::testing::WithParamInterface<VolumeBackend> {
 protected:
  StorageAccessorsOnEachBackendTest() : StorageAccessorsTest(GetParam()) {}
};

INSTANTIATE_TEST_SUITE_P(Backends, StorageAccessorsOnEachBackendTest,
                         ::testing::Values(VolumeBackend::kLocal, VolumeBackend::kCeph),
                         [](const auto& info) { return VolumeBackendName(info.param); });

TEST_F(StorageAccessorsTest, TheSecretIsShownOnceAndStoredSealed) {
  const absl::Time before = absl::Now();
  pb::CreateAccessorResponse created;
  ASSERT_TRUE(CreateAccessor(member_, "models", &created, false, "req-1").ok());
  EXPECT_THAT(created.access_key_id(), MatchesRegex("GK[A-Z2-7]{18}"));
  EXPECT_THAT(created.secret_access_key(), MatchesRegex("[A-Za-z0-9+/]{40}"));
  const pb::Accessor& a = created.accessor();
  EXPECT_EQ(a.access_key_id(), created.access_key_id());
  EXPECT_EQ(a.storage_id(), "models");
  EXPECT_EQ(a.tenant_id(), "alpha");
  EXPECT_FALSE(a.read_only());
  EXPECT_FALSE(a.creator().empty());
  // The default lifetime: a day.
  EXPECT_GE(FromProtoTime(a.expire_time()), before + absl::Hours(24) - absl::Seconds(1));
  EXPECT_LE(FromProtoTime(a.expire_time()), absl::Now() + absl::Hours(24) + absl::Seconds(1));

  // At rest: sealed, and nothing in the row holds the secret.
  const std::string sealed = StoredSecret(created.access_key_id());
  EXPECT_EQ(sealed.size(), SecretBox::kNonceBytes + 40 + SecretBox::kTagBytes);
  EXPECT_EQ(sealed.find(created.secret_access_key()), std::string::npos);
  const std::string row = StoredRow(created.access_key_id());
  ASSERT_FALSE(row.empty());
  EXPECT_EQ(row.find(created.secret_access_key()), std::string::npos);

  // A retry is the same accessor without its secret.
  pb::CreateAccessorResponse retried;
  ASSERT_TRUE(CreateAccessor(member_, "models", &retried, false, "req-1").ok());
  EXPECT_EQ(retried.access_key_id(), created.access_key_id());
  EXPECT_EQ(retried.secret_access_key(), "");

  // Lists never carry secrets.
  pb::ListAccessorsRequest list;
  list.set_storage_id("models");
  pb::ListAccessorsResponse listed;
  ASSERT_TRUE(storage_->stub().ListAccessors(Ctx(viewer_).get(), list, &listed).ok());
  ASSERT_EQ(listed.accessors_size(), 1);
  EXPECT_EQ(listed.accessors(0).access_key_id(), created.access_key_id());
  EXPECT_EQ(listed.SerializeAsString().find(created.secret_access_key()), std::string::npos);
}

TEST_P(StorageAccessorsOnEachBackendTest, TheDirectoryOpensTheKeyForItsOneStorage) {
  pb::CreateAccessorResponse rw, ro;
  ASSERT_TRUE(CreateAccessor(member_, "models", &rw).ok());
  ASSERT_TRUE(CreateAccessor(member_, "models", &ro, /*read_only=*/true).ok());
  ASSERT_OK_AND_ASSIGN(s3::AccessKey key, storage_->directory().FindAccessKey(rw.access_key_id()));
  EXPECT_EQ(key.access_key_id, rw.access_key_id());
  EXPECT_EQ(key.secret_key, rw.secret_access_key());
  EXPECT_EQ(key.grant.storage_id, "models");
  EXPECT_EQ(key.grant.tenant_id, "alpha");
  EXPECT_FALSE(key.grant.read_only);
  EXPECT_EQ(key.expire_time, FromProtoTime(rw.accessor().expire_time()));
  ASSERT_OK_AND_ASSIGN(s3::AccessKey read_only,
                       storage_->directory().FindAccessKey(ro.access_key_id()));
  EXPECT_TRUE(read_only.grant.read_only);
  EXPECT_EQ(read_only.secret_key, ro.secret_access_key());
  // Unknown and malformed keys are simply not there.
  EXPECT_THAT(storage_->directory().FindAccessKey("GKAAAAAAAAAAAAAAAAAA"),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(storage_->directory().FindAccessKey("AKIAIOSFODNN7EXAMPLE"),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(StorageAccessorsTest, DeleteRevokesAtOnce) {
  pb::CreateAccessorResponse created;
  ASSERT_TRUE(CreateAccessor(member_, "models", &created).ok());
  ASSERT_TRUE(storage_->directory().FindAccessKey(created.access_key_id()).ok());
  pb::DeleteAccessorRequest del;
  del.set_access_key_id(created.access_key_id());
  pb::DeleteAccessorResponse out;
  ASSERT_TRUE(storage_->stub().DeleteAccessor(Ctx(member_).get(), del, &out).ok());
  EXPECT_THAT(storage_->directory().FindAccessKey(created.access_key_id()),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(storage_->stub().DeleteAccessor(Ctx(member_).get(), del, &out).error_code(),
            grpc::StatusCode::NOT_FOUND);
  del.set_access_key_id("not-a-key");
  grpc::Status bad = storage_->stub().DeleteAccessor(Ctx(member_).get(), del, &out);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(bad.error_message(), StartsWith("access_key_id:"));
}

// DELETE /v1/storages/{storage_id}/accessors/{access_key_id}: the path's storage must be the
// accessor's.
TEST_F(StorageAccessorsTest, DeleteNamingAStorageTakesOnlyItsAccessors) {
  ASSERT_TRUE(CreateStorage(member_, "datasets", "ssd-1g").ok());
  pb::CreateAccessorResponse created;
  ASSERT_TRUE(CreateAccessor(member_, "models", &created).ok());
  pb::DeleteAccessorRequest del;
  del.set_access_key_id(created.access_key_id());
  del.set_storage_id("datasets");
  pb::DeleteAccessorResponse out;
  EXPECT_EQ(storage_->stub().DeleteAccessor(Ctx(member_).get(), del, &out).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(storage_->directory().FindAccessKey(created.access_key_id()).ok());
  del.set_storage_id("Bad_Storage");
  grpc::Status bad = storage_->stub().DeleteAccessor(Ctx(member_).get(), del, &out);
  EXPECT_EQ(bad.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(bad.error_message(), StartsWith("storage_id:"));
  del.set_storage_id("models");
  ASSERT_TRUE(storage_->stub().DeleteAccessor(Ctx(member_).get(), del, &out).ok());
  EXPECT_THAT(storage_->directory().FindAccessKey(created.access_key_id()),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_P(StorageAccessorsOnEachBackendTest, DeletingTheStorageTakesItsKeys) {
  pb::CreateAccessorResponse created;
  ASSERT_TRUE(CreateAccessor(member_, "models", &created).ok());
  ASSERT_TRUE(DeleteStorage(member_, "models").ok());
  EXPECT_THAT(storage_->directory().FindAccessKey(created.access_key_id()),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_EQ(StoredRow(created.access_key_id()), "");
}

TEST_F(StorageAccessorsTest, LifetimesAreBounded) {
  pb::CreateAccessorRequest req;
  req.set_storage_id("models");
  req.mutable_ttl()->set_seconds(3600);
  pb::CreateAccessorResponse out;
  const absl::Time before = absl::Now();
  ASSERT_TRUE(storage_->stub().CreateAccessor(Ctx(member_).get(), req, &out).ok());
  EXPECT_GE(FromProtoTime(out.accessor().expire_time()),
            before + absl::Hours(1) - absl::Seconds(1));
  EXPECT_LE(FromProtoTime(out.accessor().expire_time()), absl::Now() + absl::Hours(1));
  req.mutable_ttl()->set_seconds(31 * 24 * 3600);
  grpc::Status s = storage_->stub().CreateAccessor(Ctx(member_).get(), req, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), StartsWith("ttl:"));
}

TEST_F(StorageAccessorsTest, AnotherSealingKeyOpensNothing) {
  pb::CreateAccessorResponse created;
  ASSERT_TRUE(CreateAccessor(member_, "models", &created).ok());
  secret_key_ = std::string(SecretBox::kKeyBytes, '\x33');
  Restart();
  EXPECT_THAT(storage_->directory().FindAccessKey(created.access_key_id()),
              StatusIs(absl::StatusCode::kDataLoss));
}

TEST_P(StorageAccessorsOnEachBackendTest, BucketsAreReadyStorages) {
  ASSERT_OK_AND_ASSIGN(s3::Bucket bucket, storage_->directory().FindBucket("models"));
  EXPECT_EQ(bucket.storage_id, "models");
  EXPECT_EQ(bucket.tenant_id, "alpha");
  EXPECT_EQ(bucket.limits.max_bytes, kGiB);
  EXPECT_EQ(bucket.limits.max_files, 100);
  EXPECT_EQ(bucket.backend_class, VolumeBackendName(GetParam()));
  EXPECT_THAT(storage_->directory().FindBucket("nothing-here"),
              StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(storage_->directory().FindBucket("Not A Bucket"),
              StatusIs(absl::StatusCode::kNotFound));
  ASSERT_OK_AND_ASSIGN(std::vector<s3::Bucket> alpha, storage_->directory().ListBuckets("alpha"));
  ASSERT_EQ(alpha.size(), 1u);
  EXPECT_EQ(alpha[0].storage_id, "models");
  ASSERT_OK_AND_ASSIGN(std::vector<s3::Bucket> all, storage_->directory().ListBuckets(""));
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[1].storage_id, "theirs");
  // A grown storage is a larger bucket at once.
  CreateSpec("ssd-2g", "2Gi", 200);
  ASSERT_TRUE(Resize(member_, "models", "ssd-2g").ok());
  ASSERT_OK_AND_ASSIGN(bucket, storage_->directory().FindBucket("models"));
  EXPECT_EQ(bucket.limits.max_bytes, 2 * kGiB);
  EXPECT_EQ(bucket.limits.max_files, 200);
}

}  // namespace
}  // namespace gpuaas::storage::testing

// The storage service with its ceph backend (--ceph-conf, on the ctest fixture's cluster): a
// spec of backend class "ceph" makes CephFS subvolumes, whose size follows the storage's, and
// the S3 data plane's directory sends their buckets to that backend.
#include <gtest/gtest.h>

#include "tests/storage/storage_ceph_test_base.h"

namespace gpuaas::storage::testing {
namespace {

using ::gpuaas::testing::StatusIs;

TEST_F(StorageCephTest, ACephStorageIsASubvolumeThatGrowsAndGoes) {
  CreateCephSpec("ceph-4m", "4Mi");
  CreateCephSpec("ceph-16m", "16Mi");
  pb::Storage created;
  grpc::Status s = CreateStorage(member_, "on-ceph", "ceph-4m", &created);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(created.backend_class(), "ceph");
  ASSERT_OK_AND_ASSIGN(s3::Bucket bucket, storage_->directory().FindBucket("on-ceph"));
  EXPECT_EQ(bucket.backend_class, "ceph");
  EXPECT_EQ(bucket.volume_id, created.storage_uid());
  // Not in the local backend: a subvolume.
  EXPECT_THAT(storage_->local_backend()->OpenVolume(bucket.volume_id, bucket.limits),
              StatusIs(absl::StatusCode::kNotFound));

  ASSERT_OK(Put("on-ceph", "a", 3 * kMiB));
  EXPECT_THAT(Put("on-ceph", "b", 3 * kMiB), StatusIs(absl::StatusCode::kResourceExhausted));
  s = Resize(member_, "on-ceph", "ceph-16m");
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_OK(Put("on-ceph", "b", 3 * kMiB));  // grown online

  s = DeleteStorage(member_, "on-ceph");
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_THAT(storage_->ceph_backend()->OpenVolume(bucket.volume_id, bucket.limits),
              StatusIs(absl::StatusCode::kNotFound));
}

TEST_F(StorageCephTest, SnapshotsAreTakenListedRestoredAndDeletedWithinTheirTenant) {
  CreateCephSpec("ceph-8m", "8Mi");
  ASSERT_TRUE(CreateStorage(member_, "snapped", "ceph-8m").ok());
  ASSERT_OK(Put("snapped", "a", kMiB));
  auto& stub = storage_->stub();
  const auto create_snapshot = [&](const std::string& token, const std::string& id) {
    pb::CreateSnapshotRequest r;
    r.set_storage_id("snapped");
    r.set_snapshot_id(id);
    pb::Snapshot out;
    return stub.CreateSnapshot(Ctx(token).get(), r, &out);
  };
  const auto list_snapshots = [&](const std::string& token, pb::ListSnapshotsResponse* out) {
    pb::ListSnapshotsRequest r;
    r.set_storage_id("snapped");
    return stub.ListSnapshots(Ctx(token).get(), r, out);
  };
  const auto delete_snapshot = [&](const std::string& token, const std::string& id) {
    pb::DeleteSnapshotRequest r;
    r.set_storage_id("snapped");
    r.set_snapshot_id(id);
    pb::DeleteSnapshotResponse out;
    return stub.DeleteSnapshot(Ctx(token).get(), r, &out);
  };
  const auto restore = [&](const std::string& token, const std::string& id,
                           const std::string& snapshot, pb::Storage* out,
                           const std::string& spec = "ceph-8m") {
    pb::CreateStorageRequest r;
    r.set_storage_id(id);
    r.set_spec_name(spec);
    r.mutable_source_snapshot()->set_storage_id("snapped");
    r.mutable_source_snapshot()->set_snapshot_id(snapshot);
    return stub.CreateStorage(Ctx(token).get(), r, out);
  };

  grpc::Status s = create_snapshot(member_, "first");
  ASSERT_TRUE(s.ok()) << s.error_message();
  s = create_snapshot(member_, "first");
  EXPECT_TRUE(s.ok()) << "a retry answers the snapshot: " << s.error_message();
  EXPECT_EQ(create_snapshot(viewer_, "second").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(create_snapshot(member_, "Bad_Id").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  ASSERT_OK(Put("snapped", "b", kMiB));

  pb::ListSnapshotsResponse listed;
  s = list_snapshots(viewer_, &listed);
  ASSERT_TRUE(s.ok()) << s.error_message();
  ASSERT_EQ(listed.snapshots_size(), 1);
  EXPECT_EQ(listed.snapshots(0).snapshot_id(), "first");
  EXPECT_EQ(listed.snapshots(0).storage_id(), "snapped");

  // Another tenant finds neither the storage's snapshots nor anything to restore.
  EXPECT_EQ(create_snapshot(beta_, "theirs").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(list_snapshots(beta_, &listed).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(delete_snapshot(beta_, "first").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(restore(beta_, "stolen", "first", nullptr).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GetStorage(admin_, "stolen").error_code(), grpc::StatusCode::NOT_FOUND);

  // A restore is a new storage: of a spec of the same backend, within the tenant's quota.
  CreateSpec("local-8m", "8Mi");
  s = restore(member_, "elsewhere", "first", nullptr, "local-8m");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << s.error_message();
  EXPECT_THAT(s.error_message(), ::testing::HasSubstr("source_snapshot"));
  SetStorageQuota("alpha", 12 * kMiB);  // "snapped" reserves 8 MiB of it
  s = restore(member_, "over-quota", "first", nullptr);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << s.error_message();
  SetStorageQuota("alpha", 1024 * kMiB);

  pb::Storage restored;
  s = restore(member_, "restored", "first", &restored);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(restored.state(), pb::STORAGE_STATE_READY);
  EXPECT_EQ(restored.tenant_id(), "alpha");
  ASSERT_OK_AND_ASSIGN(s3::Bucket bucket, storage_->directory().FindBucket("restored"));
  ASSERT_OK_AND_ASSIGN(std::shared_ptr<Volume> volume,
                       storage_->ceph_backend()->OpenVolume(bucket.volume_id, bucket.limits));
  EXPECT_OK(volume->Stat("a").status()) << "the snapshot's data";
  EXPECT_THAT(volume->Stat("b"), StatusIs(absl::StatusCode::kNotFound)) << "written after it";
  EXPECT_EQ(restore(member_, "ghost", "missing", nullptr).error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(GetStorage(member_, "ghost").error_code(), grpc::StatusCode::NOT_FOUND)
      << "no storage is left of a restore that could not be";

  EXPECT_EQ(delete_snapshot(viewer_, "first").error_code(), grpc::StatusCode::PERMISSION_DENIED);
  s = delete_snapshot(member_, "first");
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(delete_snapshot(member_, "first").error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_OK(volume->Stat("a").status()) << "a restored storage outlives its snapshot";
  ASSERT_TRUE(create_snapshot(member_, "kept").ok());
  s = DeleteStorage(member_, "snapped");
  EXPECT_TRUE(s.ok()) << "its snapshots go with it: " << s.error_message();
  EXPECT_TRUE(DeleteStorage(member_, "restored").ok());
}

}  // namespace
}  // namespace gpuaas::storage::testing

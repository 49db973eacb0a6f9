// Attachments over real gRPC with the real local backend: what a runtime mounts, idempotent
// attach and detach, one writer and many readers, no delete while attached, and usage recounted
// from the volume after a read-write detach (what the workload wrote through its mount).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "tests/storage/storage_test_base.h"

namespace gpuaas::storage::testing {
namespace {

using ::testing::HasSubstr;

class StorageAttachmentsTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    if (IsSkipped()) return;
    CreateSpec("ssd-1g", "1Gi", 100);
    ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  }
};

TEST_F(StorageAttachmentsTest, AttachAnswersTheMountAndRepeatsIt) {
  pb::Attachment first;
  ASSERT_TRUE(Attach("models", "ins-1", /*read_only=*/false, &first).ok());
  EXPECT_EQ(first.storage_id(), "models");
  EXPECT_EQ(first.instance_id(), "ins-1");
  EXPECT_EQ(first.node_id(), "node-1");
  EXPECT_FALSE(first.read_only());
  ASSERT_FALSE(first.mount_source().host_path().empty());
  // The volume's directory is named by the storage's identity, not its reusable id.
  pb::Storage models;
  ASSERT_TRUE(GetStorage(member_, "models", &models).ok());
  EXPECT_EQ(first.storage_uid(), models.storage_uid());
  EXPECT_TRUE(std::filesystem::equivalent(
      first.mount_source().host_path(),
      std::filesystem::path(data_root()) / "volumes" / models.storage_uid()));

  pb::Attachment again;
  ASSERT_TRUE(Attach("models", "ins-1", false, &again).ok());
  EXPECT_EQ(again.SerializeAsString(), first.SerializeAsString());

  // The same instance elsewhere or in another mode must detach first.
  grpc::Status moved = Attach("models", "ins-1", false, nullptr, "node-2");
  EXPECT_EQ(moved.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(moved.error_message(), HasSubstr("detach it first"));
  EXPECT_EQ(Attach("models", "ins-1", true).error_code(), grpc::StatusCode::FAILED_PRECONDITION);

  pb::Storage s;
  ASSERT_TRUE(GetStorage(member_, "models", &s).ok());
  ASSERT_EQ(s.attachments_size(), 1);
  EXPECT_EQ(s.attachments(0).instance_id(), "ins-1");
}

TEST_F(StorageAttachmentsTest, OneWriterManyReaders) {
  ASSERT_TRUE(Attach("models", "writer", false).ok());
  grpc::Status second = Attach("models", "other-writer", false);
  EXPECT_EQ(second.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(second.error_message(), HasSubstr("writer"));
  for (const char* reader : {"reader-1", "reader-2", "reader-3"}) {
    pb::Attachment a;
    ASSERT_TRUE(Attach("models", reader, true, &a, "node-2").ok()) << reader;
    EXPECT_TRUE(a.read_only());
  }
  pb::Storage s;
  ASSERT_TRUE(GetStorage(member_, "models", &s).ok());
  EXPECT_EQ(s.attachments_size(), 4);
  // Once the writer is gone another may write.
  ASSERT_TRUE(Detach("models", "writer").ok());
  EXPECT_TRUE(Attach("models", "other-writer", false).ok());
}

TEST_F(StorageAttachmentsTest, DetachIsIdempotent) {
  ASSERT_TRUE(Attach("models", "ins-1", true).ok());
  pb::DetachStorageResponse out;
  ASSERT_TRUE(Detach("models", "ins-1", &out).ok());
  EXPECT_TRUE(out.detached());
  ASSERT_TRUE(Detach("models", "ins-1", &out).ok());
  EXPECT_FALSE(out.detached());
  ASSERT_TRUE(Detach("no-such-storage", "ins-1", &out).ok());
  EXPECT_FALSE(out.detached());
}

TEST_F(StorageAttachmentsTest, DeleteIsRefusedWhileAttached) {
  ASSERT_TRUE(Attach("models", "ins-1", true).ok());
  grpc::Status s = DeleteStorage(member_, "models");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("ins-1"));
  pb::Storage still;
  ASSERT_TRUE(GetStorage(member_, "models", &still).ok());
  EXPECT_EQ(still.state(), pb::STORAGE_STATE_READY);
  ASSERT_TRUE(Detach("models", "ins-1").ok());
  EXPECT_TRUE(DeleteStorage(member_, "models").ok());
  // Nothing to attach now.
  EXPECT_EQ(Attach("models", "ins-1", true).error_code(), grpc::StatusCode::NOT_FOUND);
}

TEST_F(StorageAttachmentsTest, UsageIncludesWhatTheWorkloadWroteAfterDetach) {
  pb::Attachment a;
  ASSERT_TRUE(Attach("models", "ins-1", false, &a).ok());
  pb::Storage s;
  ASSERT_TRUE(GetStorage(member_, "models", &s).ok());  // opens the volume: usage 0
  EXPECT_EQ(s.used_bytes(), 0);
  // The workload writes through its mount, past the volume's own accounting.
  const std::filesystem::path mount = a.mount_source().host_path();
  std::filesystem::create_directories(mount / "outputs");
  std::ofstream(mount / "outputs" / "image.png") << std::string(5000, 'p');
  std::ofstream(mount / "log.txt") << std::string(120, 'l');
  pb::DetachStorageResponse out;
  ASSERT_TRUE(Detach("models", "ins-1", &out).ok());
  ASSERT_TRUE(out.detached());
  ASSERT_TRUE(GetStorage(member_, "models", &s).ok());
  EXPECT_EQ(s.used_bytes(), 5120);
  EXPECT_EQ(s.used_files(), 2);
}

TEST_F(StorageAttachmentsTest, BadInputIsNamed) {
  pb::AttachStorageRequest req;
  req.set_storage_id("models");
  req.set_node_id("node-1");
  pb::Attachment out;
  grpc::Status s = storage_->stub().AttachStorage(Ctx(service_).get(), req, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), ::testing::StartsWith("instance_id:"));
  req.set_instance_id("ins-1");
  req.clear_node_id();
  s = storage_->stub().AttachStorage(Ctx(service_).get(), req, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), ::testing::StartsWith("node_id:"));
  req.set_node_id("node-1");
  s = storage_->stub().AttachStorage(Ctx(service_).get(), req, &out);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), ::testing::StartsWith("tenant_id:"));
}

// The instance's tenant and the identity it was bound to travel with every attach: another
// tenant's storage, or a storage that took a deleted one's id, is NOT_FOUND.
TEST_F(StorageAttachmentsTest, AttachRefusesAnotherTenantOrAnotherIdentity) {
  pb::Storage models;
  ASSERT_TRUE(GetStorage(member_, "models", &models).ok());
  ASSERT_THAT(models.storage_uid(), ::testing::StartsWith("vol_"));
  EXPECT_EQ(Attach("models", "ins-b", true, nullptr, "node-1", "beta").error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(
      Attach("models", "ins-b", true, nullptr, "node-1", "beta", models.storage_uid()).error_code(),
      grpc::StatusCode::NOT_FOUND);
  pb::Attachment old_mount;
  ASSERT_TRUE(
      Attach("models", "ins-1", false, &old_mount, "node-1", "alpha", models.storage_uid()).ok());
  EXPECT_EQ(old_mount.storage_uid(), models.storage_uid());
  std::ofstream(old_mount.mount_source().host_path() + "/old.txt") << "old";
  ASSERT_TRUE(Detach("models", "ins-1").ok());

  // The id deleted and taken again: a new identity, and a directory of its own.
  ASSERT_TRUE(DeleteStorage(member_, "models").ok());
  pb::Storage again;
  ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
  ASSERT_TRUE(GetStorage(member_, "models", &again).ok());
  EXPECT_NE(again.storage_uid(), models.storage_uid());
  EXPECT_EQ(Attach("models", "ins-1", false, nullptr, "node-1", "alpha", models.storage_uid())
                .error_code(),
            grpc::StatusCode::NOT_FOUND);
  pb::Attachment new_mount;
  ASSERT_TRUE(
      Attach("models", "ins-2", false, &new_mount, "node-1", "alpha", again.storage_uid()).ok());
  EXPECT_NE(new_mount.mount_source().host_path(), old_mount.mount_source().host_path());
  EXPECT_FALSE(std::filesystem::exists(new_mount.mount_source().host_path() + "/old.txt"));
  EXPECT_FALSE(std::filesystem::exists(old_mount.mount_source().host_path()));
}

}  // namespace
}  // namespace gpuaas::storage::testing

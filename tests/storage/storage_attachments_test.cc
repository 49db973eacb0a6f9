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
  EXPECT_TRUE(std::filesystem::equivalent(first.mount_source().host_path(),
                                          std::filesystem::path(data_root()) / "volumes/models"));

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
}

}  // namespace
}  // namespace gpuaas::storage::testing

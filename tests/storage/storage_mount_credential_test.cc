// GetMountCredential over real gRPC (issue 33): only the agent of the node an attachment is on
// passes; another node's agent, tenants, the instance service and platform admins do not, nor
// the right node after detach. With the local backend the right node is let through to find
// that its mounts need no credential (FAILED_PRECONDITION); the ceph backend answers a key
// there (tests/security/ceph_mount_attack_test proves what that key reaches).
#include <gtest/gtest.h>

#include "libs/client/channel.h"
#include "tests/storage/storage_test_base.h"

namespace gpuaas::storage::testing {
namespace {

class StorageMountCredentialTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    if (IsSkipped()) return;
    CreateSpec("ssd-1g", "1Gi", 100);
    ASSERT_TRUE(CreateStorage(member_, "models", "ssd-1g").ok());
    ASSERT_TRUE(Attach("models", "ins-1", /*read_only=*/false).ok());  // on node-1
    node_stub_ =
        pb::NodeStorageService::NewStub(*::gpuaas::client::OpenChannel(storage_->address(), {}));
  }

  grpc::StatusCode Get(const std::string& token, const std::string& storage_id = "models",
                       const std::string& instance_id = "ins-1") {
    pb::GetMountCredentialRequest req;
    req.set_storage_id(storage_id);
    req.set_instance_id(instance_id);
    pb::MountCredential out;
    grpc::Status s = node_stub_->GetMountCredential(Ctx(token).get(), req, &out);
    // Never a secret to anyone but the node, and the local backend has none to give.
    EXPECT_TRUE(out.key().empty());
    return s.error_code();
  }

  std::unique_ptr<pb::NodeStorageService::Stub> node_stub_;
};

TEST_F(StorageMountCredentialTest, OnlyTheAttachmentsNodeGetsThrough) {
  EXPECT_EQ(Get(stack_->AgentToken("node-1")), grpc::StatusCode::FAILED_PRECONDITION);
  // Another node's agent: as if there were no such attachment.
  EXPECT_EQ(Get(stack_->AgentToken("node-2")), grpc::StatusCode::NOT_FOUND);
  // Not a node at all: the tenant that owns the storage, another tenant, the instance service.
  EXPECT_EQ(Get(member_), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Get(beta_), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Get(service_), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Get(stack_->AdminToken()), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(Get(stack_->ProxyToken()), grpc::StatusCode::PERMISSION_DENIED);
  // Names that match nothing, and no token.
  EXPECT_EQ(Get(stack_->AgentToken("node-1"), "models", "ins-2"), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Get(stack_->AgentToken("node-1"), "other", "ins-1"), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(Get(""), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(StorageMountCredentialTest, TheNodeGetsNothingAfterDetach) {
  ASSERT_TRUE(Detach("models", "ins-1").ok());
  EXPECT_EQ(Get(stack_->AgentToken("node-1")), grpc::StatusCode::NOT_FOUND);
  // A retried detach (it revokes again) is still OK.
  pb::DetachStorageResponse again;
  ASSERT_TRUE(Detach("models", "ins-1", &again).ok());
  EXPECT_FALSE(again.detached());
}

}  // namespace
}  // namespace gpuaas::storage::testing

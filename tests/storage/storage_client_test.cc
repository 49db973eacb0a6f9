// client::StorageClient against the real storage service (in process, on PostgreSQL, with the
// real local backend and an in-process auth service): what the instance service and gpuaasctl
// see through it: every RPC end to end, answers and errors (a method wired to the wrong RPC
// answers with the wrong message type or fails).
#include "libs/client/storage_client.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libs/client/channel.h"
#include "libs/testing/status_matchers.h"
#include "tests/storage/storage_test_base.h"

namespace gpuaas::storage::testing {
namespace {

using client::CallContext;
using client::StorageClient;
using ::gpuaas::testing::IsOk;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

class StorageClientRealTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    if (IsSkipped()) return;
    auto channel = client::OpenChannel(storage_->address(), {});
    ASSERT_OK(channel);
    client_ = std::make_unique<StorageClient>(*channel, absl::Seconds(10));
  }
  void TearDown() override {
    client_.reset();
    StorageTest::TearDown();
  }

  CallContext As(const std::string& token) const { return CallContext().set_bearer_token(token); }

  std::unique_ptr<StorageClient> client_;
};

TEST_F(StorageClientRealTest, EveryRpcEndToEnd) {
  pb::CreateStorageSpecRequest spec;
  spec.mutable_spec()->set_spec_name("ssd-1g");
  spec.mutable_spec()->set_size("1Gi");
  spec.mutable_spec()->set_max_files(100);
  ASSERT_OK_AND_ASSIGN(pb::StorageSpec made, client_->CreateStorageSpec(spec, As(admin_)));
  EXPECT_EQ(made.size_bytes(), kGiB);
  pb::GetStorageSpecRequest get_spec;
  get_spec.set_spec_name("ssd-1g");
  EXPECT_THAT(client_->GetStorageSpec(get_spec, As(member_)), IsOk());
  ASSERT_OK_AND_ASSIGN(pb::ListStorageSpecsResponse specs,
                       client_->ListStorageSpecs({}, As(member_)));
  EXPECT_EQ(specs.specs_size(), 1);
  pb::UpdateStorageSpecRequest update_spec;
  update_spec.mutable_spec()->set_spec_name("ssd-1g");
  update_spec.mutable_spec()->set_description("one gig");
  update_spec.mutable_update_mask()->add_paths("description");
  ASSERT_OK_AND_ASSIGN(made, client_->UpdateStorageSpec(update_spec, As(admin_)));
  EXPECT_EQ(made.description(), "one gig");

  pb::CreateStorageRequest create;
  create.set_storage_id("models");
  create.set_spec_name("ssd-1g");
  ASSERT_OK_AND_ASSIGN(pb::Storage storage, client_->CreateStorage(create, As(member_)));
  EXPECT_EQ(storage.state(), pb::STORAGE_STATE_READY);
  pb::GetStorageRequest get;
  get.set_storage_id("models");
  EXPECT_THAT(client_->GetStorage(get, As(viewer_)), IsOk());
  ASSERT_OK_AND_ASSIGN(pb::ListStoragesResponse storages, client_->ListStorages({}, As(viewer_)));
  EXPECT_EQ(storages.storages_size(), 1);
  pb::UpdateStorageRequest rename;
  rename.mutable_storage()->set_storage_id("models");
  rename.mutable_storage()->set_name("weights");
  rename.mutable_update_mask()->add_paths("name");
  ASSERT_OK_AND_ASSIGN(storage, client_->UpdateStorage(rename, As(member_)));
  EXPECT_EQ(storage.name(), "weights");

  pb::AttachStorageRequest attach;
  attach.set_storage_id("models");
  attach.set_tenant_id("alpha");
  attach.set_instance_id("ins-1");
  attach.set_node_id("node-1");
  ASSERT_OK_AND_ASSIGN(pb::Attachment attached, client_->AttachStorage(attach, As(service_)));
  EXPECT_FALSE(attached.mount_source().host_path().empty());
  pb::DeleteStorageRequest del;
  del.set_storage_id("models");
  EXPECT_THAT(client_->DeleteStorage(del, As(member_)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("ins-1")));
  pb::DetachStorageRequest detach;
  detach.set_storage_id("models");
  detach.set_instance_id("ins-1");
  ASSERT_OK_AND_ASSIGN(pb::DetachStorageResponse detached,
                       client_->DetachStorage(detach, As(service_)));
  EXPECT_TRUE(detached.detached());

  pb::CreateAccessorRequest create_key;
  create_key.set_storage_id("models");
  ASSERT_OK_AND_ASSIGN(pb::CreateAccessorResponse key,
                       client_->CreateAccessor(create_key, As(member_)));
  EXPECT_EQ(key.secret_access_key().size(), 40u);
  pb::ListAccessorsRequest list_keys;
  list_keys.set_storage_id("models");
  ASSERT_OK_AND_ASSIGN(pb::ListAccessorsResponse keys,
                       client_->ListAccessors(list_keys, As(viewer_)));
  EXPECT_EQ(keys.accessors_size(), 1);
  pb::DeleteAccessorRequest del_key;
  del_key.set_access_key_id(key.access_key_id());
  EXPECT_THAT(client_->DeleteAccessor(del_key, As(member_)), IsOk());

  EXPECT_THAT(client_->DeleteStorage(del, As(member_)), IsOk());
  EXPECT_THAT(client_->GetStorage(get, As(member_)),
              StatusIs(absl::StatusCode::kNotFound, "storage not found"));
  pb::DeleteStorageSpecRequest del_spec;
  del_spec.set_spec_name("ssd-1g");
  EXPECT_THAT(client_->DeleteStorageSpec(del_spec, As(admin_)), IsOk());
}

TEST_F(StorageClientRealTest, ErrorsKeepCodeAndMessage) {
  pb::GetStorageRequest get;
  get.set_storage_id("Bad!");
  EXPECT_THAT(client_->GetStorage(get, As(member_)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("storage_id:")));
  EXPECT_THAT(client_->GetStorage(get, CallContext()),
              StatusIs(absl::StatusCode::kUnauthenticated));
  pb::CreateStorageSpecRequest spec;
  spec.mutable_spec()->set_spec_name("ssd-1g");
  spec.mutable_spec()->set_size("1Gi");
  spec.mutable_spec()->set_max_files(100);
  EXPECT_THAT(client_->CreateStorageSpec(spec, As(member_)),
              StatusIs(absl::StatusCode::kPermissionDenied));
}

}  // namespace
}  // namespace gpuaas::storage::testing

// Attacks on storages through instances (issue 22, hole 3), on the real platform: a tenant that
// deleted a storage restarts an old instance after another tenant took the storage's id, and a
// tenant that names another tenant's storage when it creates an instance or attaches one. Each
// runs with the storages on the local backend and on Ceph (subvolumes the agent mounts with
// ceph-fuse, on the ctest fixture `ceph`'s cluster).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::Eventually;

// Every run of the workload says what it found in its storage: the file f.txt if one is there
// ("read: <content>"), else it writes $MARK into it ("wrote").
constexpr std::string_view kReadOrWrite =
    "if [ -f /data/f.txt ]; then echo \"read: $(cat /data/f.txt)\"; "
    "else echo \"$MARK\" > /data/f.txt && echo wrote; fi; exec sleep 600";

bool Is(const instancepb::Instance& i, instancepb::State state) { return i.state() == state; }

class StorageAttackTest : public gpuaas::testing::PgTest,
                          public ::testing::WithParamInterface<StorageBackend> {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    PlatformOptions options;
    options.storage_backend = GetParam();
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    victim_ = stack_->CreateTenant("tenant-a");
    attacker_ = stack_->CreateTenant("tenant-b");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 2);
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  grpc::Status Create(const std::string& token, const std::string& instance_id,
                      const std::string& storage_id, const std::string& mark) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(instance_id);
    req.set_spec_name("a100.1x");
    req.set_storage_id(storage_id);
    instancepb::Template* t = req.mutable_template_();
    t->set_cmd(std::string(kReadOrWrite));
    instancepb::Env* env = t->add_envs();
    env->set_name("MARK");
    env->set_value(mark);
    instancepb::Volume* volume = t->add_volumes();
    volume->set_name("data");
    volume->set_mount_path("/data");
    instancepb::Instance out;
    return stack_->instances().CreateInstance(PlatformStack::Ctx(token).get(), req, &out);
  }
  void Stop(const std::string& token, const std::string& instance_id) {
    instancepb::StopInstanceRequest req;
    req.set_instance_id(instance_id);
    instancepb::Instance out;
    grpc::Status s = stack_->instances().StopInstance(PlatformStack::Ctx(token).get(), req, &out);
    ASSERT_TRUE(s.ok()) << s.error_message();
    stack_->WaitInstance(token, instance_id,
                         [](const auto& i) { return Is(i, instancepb::STATE_STOPPED); });
  }
  grpc::Status Start(const std::string& token, const std::string& instance_id) {
    instancepb::StartInstanceRequest req;
    req.set_instance_id(instance_id);
    instancepb::Instance out;
    return stack_->instances().StartInstance(PlatformStack::Ctx(token).get(), req, &out);
  }
  // What run `run` of the instance's workload printed so far ("" before it started).
  std::string Output(const std::string& instance_id, int run) {
    std::ifstream in(stack_->workload_root("node-a") / (instance_id + "." + std::to_string(run)) /
                     "stdout.log");
    std::stringstream out;
    out << in.rdbuf();
    return out.str();
  }
  // Waits for the run's first line and returns the output.
  std::string FirstWords(const std::string& instance_id, int run) {
    std::string said;
    EXPECT_TRUE(Eventually(
        [&] {
          said = Output(instance_id, run);
          return said.find('\n') != std::string::npos;
        },
        absl::Seconds(30)))
        << instance_id << "." << run << " said nothing";
    return said;
  }
  storagepb::Storage GetStorage(const std::string& token, const std::string& storage_id) {
    storagepb::GetStorageRequest req;
    req.set_storage_id(storage_id);
    storagepb::Storage out;
    grpc::Status s = stack_->storage_stub().GetStorage(PlatformStack::Ctx(token).get(), req, &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    return out;
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string victim_;    // tenant-a's member
  std::string attacker_;  // tenant-b's member
};

INSTANTIATE_TEST_SUITE_P(Backends, StorageAttackTest,
                         ::testing::Values(StorageBackend::kLocal, StorageBackend::kCeph),
                         [](const auto& info) { return StorageBackendName(info.param); });

// B's instance was made with B's storage "team-data"; B deleted the storage, A created its own
// "team-data" and wrote a secret there. B starts the old instance: the start fails, saying the
// storage is gone, and no workload of B's sees A's file.
TEST_P(StorageAttackTest, RestartAfterTheIdWasTakenDoesNotMountTheNewOwnersStorage) {
  stack_->CreateStorage(attacker_, "team-data");
  const std::string b_uid = GetStorage(attacker_, "team-data").storage_uid();
  ASSERT_TRUE(Create(attacker_, "b-old", "team-data", "b-own").ok());
  ASSERT_TRUE(
      Is(stack_->WaitInstance(attacker_, "b-old",
                              [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); }),
         instancepb::STATE_RUNNING))
      << stack_->instance().Log();
  EXPECT_EQ(FirstWords("b-old", 1), "wrote\n");
  Stop(attacker_, "b-old");
  storagepb::DeleteStorageRequest del;
  del.set_storage_id("team-data");
  storagepb::DeleteStorageResponse deleted;
  grpc::Status s =
      stack_->storage_stub().DeleteStorage(PlatformStack::Ctx(attacker_).get(), del, &deleted);
  ASSERT_TRUE(s.ok()) << s.error_message();

  // A takes the id and keeps a secret in it; its own instance reads it back on a later run
  // (the legitimate path: a tenant's storage mounts, with its file).
  stack_->CreateStorage(victim_, "team-data");
  EXPECT_NE(GetStorage(victim_, "team-data").storage_uid(), b_uid);
  ASSERT_TRUE(Create(victim_, "a-inst", "team-data", "a-secret-2f9c").ok());
  stack_->WaitInstance(victim_, "a-inst",
                       [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); });
  EXPECT_EQ(FirstWords("a-inst", 1), "wrote\n");
  Stop(victim_, "a-inst");
  ASSERT_TRUE(Start(victim_, "a-inst").ok());
  stack_->WaitInstance(victim_, "a-inst",
                       [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); });
  EXPECT_EQ(FirstWords("a-inst", 2), "read: a-secret-2f9c\n");
  // Stopped, so nothing but the identity check stands between B's start and A's storage (a
  // running writer would refuse B's read-write attach for another reason).
  Stop(victim_, "a-inst");

  // The attack.
  s = Start(attacker_, "b-old");
  ASSERT_TRUE(s.ok()) << s.error_message();
  const instancepb::Instance after = stack_->WaitInstance(attacker_, "b-old", [](const auto& i) {
    return Is(i, instancepb::STATE_FAILED) || Is(i, instancepb::STATE_RUNNING);
  });
  EXPECT_EQ(after.state(), instancepb::STATE_FAILED);
  EXPECT_EQ(after.reason(), instancepb::REASON_STORAGE_ERROR);
  EXPECT_NE(after.message().find("not found"), std::string::npos) << after.message();
  EXPECT_EQ(Output("b-old", 2).find("a-secret-2f9c"), std::string::npos)
      << "B's workload read A's file";
  EXPECT_EQ(GetStorage(victim_, "team-data").attachments_size(), 0);

  // A's storage is as A left it: A's next run still reads its own secret, not B's mark.
  ASSERT_TRUE(Start(victim_, "a-inst").ok());
  stack_->WaitInstance(victim_, "a-inst",
                       [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); });
  EXPECT_EQ(FirstWords("a-inst", 3), "read: a-secret-2f9c\n");
}

// B names A's storage: creating an instance with it is NOT_FOUND, as for a storage that does
// not exist; attaching it directly is not a tenant's power at all.
TEST_P(StorageAttackTest, AnotherTenantsStorageIdIsNotFoundAtCreateAndCannotBeAttached) {
  stack_->CreateStorage(victim_, "a-private");
  grpc::Status s = Create(attacker_, "b-snoop", "a-private", "b");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();
  grpc::Status missing = Create(attacker_, "b-snoop", "no-such-storage", "b");
  EXPECT_EQ(missing.error_code(), grpc::StatusCode::NOT_FOUND) << missing.error_message();

  storagepb::AttachStorageRequest attach;
  attach.set_storage_id("a-private");
  attach.set_tenant_id("tenant-b");
  attach.set_instance_id("b-snoop");
  attach.set_node_id("node-a");
  storagepb::Attachment attached;
  s = stack_->storage_stub().AttachStorage(PlatformStack::Ctx(attacker_).get(), attach, &attached);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED) << s.error_message();
  // Even the platform's own service identity gets nothing of A's for an instance of B's.
  s = stack_->storage_stub().AttachStorage(PlatformStack::Ctx(stack_->admin_token()).get(), attach,
                                           &attached);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND) << s.error_message();

  // The legitimate path: A's own instance mounts A's storage.
  ASSERT_TRUE(Create(victim_, "a-own", "a-private", "a-mark").ok());
  stack_->WaitInstance(victim_, "a-own",
                       [](const auto& i) { return Is(i, instancepb::STATE_RUNNING); });
  EXPECT_EQ(FirstWords("a-own", 1), "wrote\n");
  EXPECT_EQ(GetStorage(victim_, "a-private").attachments_size(), 1);
}

}  // namespace
}  // namespace gpuaas::platform_testing

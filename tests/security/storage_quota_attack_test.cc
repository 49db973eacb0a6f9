// Attacks on a storage's size (issue 22, fair sharing of shared limits), on the real platform:
// a tenant's workload writes far past its 16 MiB storage through /data, hoping to fill the disk
// PostgreSQL and every other tenant live on, and an S3 client writes past it too. Each runs on
// both backends: on local (--volume-filesystem=loop-ext4) the kernel stops both at the size, the
// volume being its own ext4 file system; on ceph (the ctest fixture `ceph`'s cluster) CephFS's
// quota on the subvolume does, with the lag services/storage/ceph/README.md describes. Writes
// under the size keep working.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "libs/testing/eventually.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/s3/testing/raw_client.h"
#include "tests/platform/platform_stack.h"

namespace gpuaas::platform_testing {
namespace {

namespace fs = std::filesystem;
using gpuaas::testing::Eventually;
using storage::s3::testing::HttpReply;
using storage::s3::testing::RawRequest;
using storage::s3::testing::Send;
using storage::s3::testing::TestKey;

constexpr int64_t kSize = 16 << 20;
// What a storage may hold at most after a writer was refused. ceph-fuse checks each write
// against the quota root's usage as the MDS last told it, so one writer passes the size by what
// it writes before that news comes: here the 64 MiB write into 16 MiB stopped at 28 to 41 MiB
// (11 runs on the 2-core VM). The overshoot is time, not size: a faster writer passes by more.
int64_t MostHeld(StorageBackend backend) {
  return backend == StorageBackend::kLocal ? kSize : 3 * kSize;
}

// A small legitimate file, then 64 MiB (four times the size) into one file; reports how each
// ended and what /data then holds, and keeps running so the test can look.
constexpr std::string_view kFill =
    "head -c 1048576 /dev/zero > /data/small; echo small=$?; "
    "head -c 67108864 /dev/zero > /data/fill; echo fill=$?; "
    "echo kib=$(du -sk /data | cut -f1); echo done; exec sleep 600";

int64_t BytesUnder(const fs::path& dir) {
  int64_t total = 0;
  for (const fs::directory_entry& entry : fs::recursive_directory_iterator(dir)) {
    if (entry.is_regular_file()) total += static_cast<int64_t>(entry.file_size());
  }
  return total;
}

class StorageQuotaAttackTest : public gpuaas::testing::PgTest,
                               public ::testing::WithParamInterface<StorageBackend> {
 protected:
  void SetUp() override {
    PgTest::SetUp();
    if (IsSkipped()) return;
    PlatformOptions options;
    options.storage_backend = GetParam();
    // A local storage's size is the kernel's only on a file system of its own.
    if (GetParam() == StorageBackend::kLocal) options.volume_filesystem = "loop-ext4";
    stack_ = std::make_unique<PlatformStack>(dsn(), dir_.path(), options);
    token_ = stack_->CreateTenant("tenant-a");
    stack_->CreateSpecWithStocks("a100.1x", "A100-80GB", 1, 0, 1);
    CreateSmallStorage("small");
    const std::string endpoint = stack_->s3_endpoint();
    port_ = std::stoi(endpoint.substr(endpoint.rfind(':') + 1));
  }
  void TearDown() override {
    stack_.reset();
    PgTest::TearDown();
  }

  void CreateSmallStorage(const std::string& storage_id) {
    stack_->CreateStorage(token_, storage_id, "16Mi");
    storagepb::GetStorageRequest get;
    get.set_storage_id(storage_id);
    storagepb::Storage storage;
    grpc::Status s =
        stack_->storage_stub().GetStorage(PlatformStack::Ctx(token_).get(), get, &storage);
    ASSERT_TRUE(s.ok()) << s.error_message();
    // What the workload's /data is on the host.
    data_ = stack_->StorageDataPath(storage.storage_uid());
    ASSERT_FALSE(data_.empty()) << storage.storage_uid();
    storagepb::CreateAccessorRequest accessor_req;
    accessor_req.set_storage_id(storage_id);
    accessor_req.set_description("tests/security");
    storagepb::CreateAccessorResponse accessor;
    s = stack_->storage_stub().CreateAccessor(PlatformStack::Ctx(token_).get(), accessor_req,
                                              &accessor);
    ASSERT_TRUE(s.ok()) << s.error_message();
    key_ = TestKey{accessor.access_key_id(), accessor.secret_access_key()};
  }

  HttpReply S3(const std::string& method, const std::string& path, std::string body = "") {
    RawRequest r;
    r.method = method;
    r.path = path;
    r.body = std::move(body);
    r.key = key_;
    return Send(port_, r);
  }

  // Runs `cmd` in an instance with the storage at /data; what it printed once it said "done".
  std::string RunWorkload(const std::string& instance_id, std::string_view cmd) {
    instancepb::CreateInstanceRequest req;
    req.set_instance_id(instance_id);
    req.set_spec_name("a100.1x");
    req.set_storage_id("small");
    req.mutable_template_()->set_cmd(std::string(cmd));
    instancepb::Volume* volume = req.mutable_template_()->add_volumes();
    volume->set_name("data");
    volume->set_mount_path("/data");
    instancepb::Instance out;
    grpc::Status s =
        stack_->instances().CreateInstance(PlatformStack::Ctx(token_).get(), req, &out);
    EXPECT_TRUE(s.ok()) << s.error_message();
    std::string said;
    EXPECT_TRUE(Eventually(
        [&] {
          std::ifstream in(stack_->workload_root("node-a") / (instance_id + ".1") / "stdout.log");
          std::stringstream text;
          text << in.rdbuf();
          said = text.str();
          return said.find("done\n") != std::string::npos;
        },
        absl::Seconds(60)))
        << instance_id << " did not finish: " << said << "\n"
        << stack_->instance().Log();
    return said;
  }

  // Waits until the storage service counts more than `bytes` in the storage (ceph: CephFS's
  // counters trail a workload's writes by seconds; the service's count of them, by as much).
  bool EventuallyUsedMoreThan(int64_t bytes) {
    return Eventually(
        [&] {
          storagepb::GetStorageRequest get;
          get.set_storage_id("small");
          storagepb::Storage storage;
          return stack_->storage_stub()
                     .GetStorage(PlatformStack::Ctx(token_).get(), get, &storage)
                     .ok() &&
                 storage.used_bytes() > bytes;
        },
        absl::Seconds(30));
  }

  gpuaas::testing::TempDir dir_;
  std::unique_ptr<PlatformStack> stack_;
  std::string token_;
  fs::path data_;
  TestKey key_;
  int port_ = 0;
};

INSTANTIATE_TEST_SUITE_P(Backends, StorageQuotaAttackTest,
                         ::testing::Values(StorageBackend::kLocal, StorageBackend::kCeph),
                         [](const auto& info) { return StorageBackendName(info.param); });

// The workload writes 64 MiB into its 16 MiB storage: the write fails (ENOSPC, EDQUOT) and the
// storage holds at most its size (ceph: MostHeld); the 1 MiB file written first is there. Then
// S3 writes into the full storage are refused (QuotaExceeded, nothing stored) until the filler
// is deleted.
TEST_P(StorageQuotaAttackTest, AWorkloadCannotWritePastItsStoragesSize) {
  const std::string said = RunWorkload("filler", kFill);
  EXPECT_NE(said.find("small=0\n"), std::string::npos) << said;
  EXPECT_EQ(said.find("fill=0\n"), std::string::npos) << "64 MiB fitted: " << said;
  const size_t kib = said.find("kib=");
  ASSERT_NE(kib, std::string::npos) << said;
  EXPECT_LE(std::stoll(said.substr(kib + 4)) * 1024, MostHeld(GetParam())) << said;
  EXPECT_LE(BytesUnder(data_), MostHeld(GetParam()));
  EXPECT_EQ(fs::file_size(data_ / "small"), 1u << 20);

  // S3 into the storage the workload filled: local's kernel refuses what the counters allow;
  // on ceph the refusal waits for CephFS's counters to have the workload's writes.
  if (GetParam() == StorageBackend::kCeph) {
    ASSERT_TRUE(EventuallyUsedMoreThan(kSize - (4 << 20)))
        << "the storage service never counted the workload's writes";
  }
  HttpReply late = S3("PUT", "/small/late", std::string(4 << 20, 'x'));
  EXPECT_EQ(late.status, 403) << late.body;
  EXPECT_EQ(late.ErrorCode(), "QuotaExceeded") << late.body;
  EXPECT_EQ(S3("GET", "/small/late").status, 404) << "a partial object was left";

  // The legitimate path: room made, the same write is stored. On ceph the service's ceph-fuse
  // refuses it (EDQUOT, nothing stored) until the MDS's usage has the delete, seconds later.
  EXPECT_EQ(S3("DELETE", "/small/fill").status, 204);
  HttpReply again = S3("PUT", "/small/late", std::string(4 << 20, 'x'));
  if (GetParam() == StorageBackend::kCeph && again.status != 200) {
    Eventually(
        [&] {
          again = S3("PUT", "/small/late", std::string(4 << 20, 'x'));
          return again.status == 200;
        },
        absl::Seconds(30));
  }
  EXPECT_EQ(again.status, 200) << again.body;
  EXPECT_EQ(S3("GET", "/small/late").body.size(), 4u << 20);
}

// An S3 client PUTs twice the storage's size in one object: refused before a byte lands.
TEST_P(StorageQuotaAttackTest, AnS3PutCannotPassTheStoragesSize) {
  HttpReply big = S3("PUT", "/small/big", std::string(2 * kSize, 'x'));
  EXPECT_EQ(big.status, 403) << big.body;
  EXPECT_EQ(big.ErrorCode(), "QuotaExceeded") << big.body;
  EXPECT_EQ(S3("GET", "/small/big").status, 404);
  EXPECT_LE(BytesUnder(data_), kSize);
  HttpReply fits = S3("PUT", "/small/fits", std::string(kSize / 2, 'x'));
  EXPECT_EQ(fits.status, 200) << fits.body;
}

}  // namespace
}  // namespace gpuaas::platform_testing

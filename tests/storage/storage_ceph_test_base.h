// The storage integration fixture (storage_test_base.h) with the ceph backend beside the local
// one, on the ctest fixture's cluster (FIXTURES ceph): specs of backend class "ceph" make CephFS
// subvolumes.
#pragma once

#include <memory>
#include <string>

#include "services/storage/ceph/test_cluster.h"
#include "tests/storage/storage_test_base.h"

namespace gpuaas::storage::testing {

inline constexpr int64_t kMiB = 1 << 20;

class StorageCephTest : public StorageTest {
 protected:
  void SetUp() override {
    StorageTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_OK_AND_ASSIGN(const ceph::ClusterOptions cluster, ceph::TestClusterOptions());
    storage_.reset();  // the same service, now with the ceph backend beside the local one
    storage_ = std::make_unique<StorageStack>(dsn(), stack_->address(), data_root(), secret_key_,
                                              "directory", [&](StorageAppOptions& o) {
                                                o.ceph_conf = cluster.conf_path;
                                                o.ceph_keyring = cluster.keyring_path;
                                                o.sync_writes = true;
                                              });
    ASSERT_NE(storage_->ceph_backend(), nullptr);
  }

  void CreateCephSpec(const std::string& name, const std::string& size) {
    pb::CreateStorageSpecRequest req;
    req.mutable_spec()->set_spec_name(name);
    req.mutable_spec()->set_size(size);
    req.mutable_spec()->set_max_files(1000);
    req.mutable_spec()->set_price_per_gb_hour_micros(40);
    req.mutable_spec()->set_backend_class("ceph");
    pb::StorageSpec out;
    grpc::Status s = storage_->stub().CreateStorageSpec(Ctx(admin_).get(), req, &out);
    ASSERT_TRUE(s.ok()) << name << ": " << s.error_message();
  }

  // Writes `bytes` through the bucket's backend, as the S3 data plane does.
  absl::Status Put(const std::string& storage_id, const std::string& key, int64_t bytes) {
    absl::StatusOr<s3::Bucket> bucket = storage_->directory().FindBucket(storage_id);
    if (!bucket.ok()) return bucket.status();
    if (bucket->backend_class != "ceph") return absl::InternalError("not a ceph bucket");
    absl::StatusOr<std::shared_ptr<Volume>> volume =
        storage_->ceph_backend()->OpenVolume(bucket->volume_id, bucket->limits);
    if (!volume.ok()) return volume.status();
    absl::StatusOr<std::unique_ptr<ObjectWriter>> writer = (*volume)->Create(key, bytes, "");
    if (!writer.ok()) return writer.status();
    if (absl::Status s = (*writer)->Write(std::string(static_cast<size_t>(bytes), 'c')); !s.ok()) {
      return s;
    }
    return (*writer)->Commit().status();
  }
};

}  // namespace gpuaas::storage::testing

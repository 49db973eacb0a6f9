// The fixture the storage integration tests share: a database, auth, one storage service with a
// real local backend in a temp dir, tenants alpha and beta with storage quotas, their users'
// tokens, a ROLE_SERVICE token, and short-hands for the RPCs the tests repeat.
#pragma once

#include <gtest/gtest.h>

#include <memory>
#include <string>

#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "tests/auth/auth_stack.h"
#include "tests/storage/storage_stack.h"

namespace gpuaas::storage::testing {

inline constexpr int64_t kGiB = int64_t{1} << 30;

// Which backend the fixture's specs (and so its storages) use: kCeph serves the ctest fixture
// `ceph`'s cluster beside local (the test fails without one).
enum class VolumeBackend { kLocal, kCeph };
// "local", "ceph": the spec's backend_class, and parameterized tests' names.
std::string VolumeBackendName(VolumeBackend backend);

class StorageTest : public auth::testing::AuthStackTest {
 protected:
  StorageTest() = default;
  explicit StorageTest(VolumeBackend backend) : backend_(backend) {}

  void SetUp() override;
  void TearDown() override;

  // Stops the storage service and starts another on the same database and data root.
  void Restart();

  // Sets the tenant's quota.max_storage_bytes, as the platform admin.
  void SetStorageQuota(const std::string& tenant_id, int64_t bytes);

  // A spec of `size` ("1Gi") and `max_files` on the fixture's backend, as the platform admin;
  // fails the test otherwise.
  void CreateSpec(const std::string& name, const std::string& size, int64_t max_files = 1000);
  grpc::Status CreateStorage(const std::string& token, const std::string& storage_id,
                             const std::string& spec, pb::Storage* out = nullptr,
                             const std::string& tenant_id = "");
  grpc::Status GetStorage(const std::string& token, const std::string& storage_id,
                          pb::Storage* out = nullptr);
  grpc::Status Resize(const std::string& token, const std::string& storage_id,
                      const std::string& spec, pb::Storage* out = nullptr);
  grpc::Status DeleteStorage(const std::string& token, const std::string& storage_id);
  // As the instance service attaches: for an instance of `tenant_id` bound to `storage_uid`
  // ("" for an instance created before identities).
  grpc::Status Attach(const std::string& storage_id, const std::string& instance_id, bool read_only,
                      pb::Attachment* out = nullptr, const std::string& node_id = "node-1",
                      const std::string& tenant_id = "alpha", const std::string& storage_uid = "");
  grpc::Status Detach(const std::string& storage_id, const std::string& instance_id,
                      pb::DetachStorageResponse* out = nullptr);
  grpc::Status CreateAccessor(const std::string& token, const std::string& storage_id,
                              pb::CreateAccessorResponse* out = nullptr, bool read_only = false,
                              const std::string& request_id = "");

  // Writes `bytes` bytes under `key` through the fixture backend's Volume, as the S3 data plane
  // does.
  void WriteObject(const std::string& storage_id, const std::string& key, int64_t bytes);

  std::string data_root() const { return (dir_.path() / "data").string(); }

  const VolumeBackend backend_ = VolumeBackend::kLocal;
  gpuaas::testing::TempDir dir_;
  std::string secret_key_;
  std::unique_ptr<StorageStack> storage_;
  std::string member_;   // MEMBER of alpha
  std::string viewer_;   // VIEWER of alpha
  std::string beta_;     // TENANT_ADMIN of beta
  std::string service_;  // ROLE_SERVICE, no tenant

 private:
  // The storage service on the database and data root, with the ceph backend for kCeph.
  void StartStorage();
};

}  // namespace gpuaas::storage::testing

// An S3 Server in-process on a free loopback port, over the real local backend in a temporary
// data root (or the ceph backend on the test cluster: GPUAAS_TEST_CEPH_DIR, see
// services/storage/ceph), with a small in-memory Directory standing in for the control plane's
// accessor and storage tables, and real Ed25519 access tokens for the Bearer path.
//
// Buckets: kBucketA (tenant ten_a, roomy), kBucketB (tenant ten_b), kBucketSmall (ten_a,
// 64 KiB and 4 files). Keys: kKeyRw (read-write on A), kKeyRo (read-only on A), kKeyB
// (read-write on B), kKeyExpired (on A, expired an hour ago), kKeySmall (read-write on small).
#pragma once

#include <filesystem>
#include <memory>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "libs/authz/jwt.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "libs/testing/temp_dir.h"
#include "services/storage/backend.h"
#include "services/storage/s3/directory.h"
#include "services/storage/s3/server.h"

namespace gpuaas::storage::s3::testing {

inline constexpr std::string_view kBucketA = "sto_a";
inline constexpr std::string_view kBucketB = "sto_b";
inline constexpr std::string_view kBucketSmall = "sto_small";

// Which backend serves the stack's buckets.
enum class StackBackend { kLocal, kCeph };
// "local", "ceph": for parameterized tests' names.
std::string StackBackendName(StackBackend backend);

struct TestKey {
  std::string id;
  std::string secret;
};
inline const TestKey kKeyRw{"AKIDRWTEST0000000001", "rw-secret/ABCDEFGHIJKLMNOPQRSTUVWXYZ0123"};
inline const TestKey kKeyRo{"AKIDROTEST0000000002", "ro-secret/ABCDEFGHIJKLMNOPQRSTUVWXYZ0123"};
inline const TestKey kKeyB{"AKIDBBTEST0000000003", "bb-secret/ABCDEFGHIJKLMNOPQRSTUVWXYZ0123"};
inline const TestKey kKeyExpired{"AKIDEXTEST0000000004", "ex-secret/ABCDEFGHIJKLMNOPQRSTUVWXYZ01"};
inline const TestKey kKeySmall{"AKIDSMTEST0000000005", "sm-secret/ABCDEFGHIJKLMNOPQRSTUVWXYZ01"};

// The control plane's tables, as far as the data plane asks them.
class TestDirectory final : public Directory {
 public:
  void AddKey(AccessKey key);
  void RevokeKey(std::string_view access_key_id);
  void AddBucket(Bucket bucket);

  absl::StatusOr<AccessKey> FindAccessKey(std::string_view access_key_id) override;
  absl::StatusOr<Bucket> FindBucket(std::string_view storage_id) override;
  absl::StatusOr<std::vector<Bucket>> ListBuckets(std::string_view tenant_id) override;

 private:
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, AccessKey> keys_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Bucket> buckets_ ABSL_GUARDED_BY(mu_);
};

class S3TestStack final {
 public:
  // Starts the server; aborts the test binary when it cannot (a broken environment, or no
  // Ceph cluster for kCeph). A ceph stack's volumes are its own (random ids) and removed by the
  // destructor, so stacks may share the cluster.
  explicit S3TestStack(ServerOptions options = {},
                       StackBackend backend_kind = StackBackend::kLocal);
  ~S3TestStack();

  int port() const { return server_->port(); }
  std::string endpoint() const;
  TestDirectory& directory() { return directory_; }
  Backend& backend() { return *backend_; }
  const std::filesystem::path& data_root() const { return data_root_; }
  // Where a bucket's objects live on this host.
  std::filesystem::path VolumePath(std::string_view bucket);
  // "Bearer <jwt>" for a user of `tenant` with `role`.
  std::string BearerToken(std::string_view tenant, authz::Role role);

 private:
  gpuaas::testing::TempDir temp_;
  std::filesystem::path data_root_;
  SystemClock clock_;
  authz::Ed25519Key signing_key_;
  TestDirectory directory_;
  std::unique_ptr<Backend> backend_;
  std::unique_ptr<Backends> backends_;
  std::vector<std::string> volume_ids_;
  std::unique_ptr<authz::Authenticator> tokens_;
  std::unique_ptr<Server> server_;
  bool tls_ = false;
};

}  // namespace gpuaas::storage::s3::testing

#include "services/storage/s3/testing/test_stack.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "services/storage/ceph/ceph_backend.h"
#include "services/storage/ceph/test_cluster.h"
#include "services/storage/local/local_backend.h"
#include "services/storage/local/staged_file.h"

namespace gpuaas::storage::s3::testing {
namespace {

constexpr std::string_view kKid = "test-key";

class StaticJwks final : public authz::JwksSource {
 public:
  explicit StaticJwks(std::string json) : json_(std::move(json)) {}
  absl::StatusOr<std::string> FetchJwks() override { return json_; }

 private:
  std::string json_;
};

void Check(const absl::Status& status, std::string_view what) {
  if (!status.ok()) {
    std::cerr << "S3TestStack: " << what << ": " << status << "\n";
    std::abort();
  }
}

// The ceph backend on the test cluster, mounted under `dir`.
std::unique_ptr<Backend> NewTestCephBackend(const std::filesystem::path& dir) {
  auto cluster = ceph::TestClusterOptions();
  Check(cluster.status(), "ceph cluster");
  ceph::CephBackendOptions options;
  options.cluster = *std::move(cluster);
  options.mount_point = (dir / "ceph").string();
  auto backend = ceph::NewCephBackend(options);
  Check(backend.status(), "ceph backend");
  return *std::move(backend);
}

}  // namespace

std::string StackBackendName(StackBackend backend) {
  return backend == StackBackend::kCeph ? "ceph" : "local";
}

void TestDirectory::AddKey(AccessKey key) {
  absl::MutexLock lock(&mu_);
  keys_[key.access_key_id] = std::move(key);
}

void TestDirectory::RevokeKey(std::string_view access_key_id) {
  absl::MutexLock lock(&mu_);
  keys_.erase(std::string(access_key_id));
}

void TestDirectory::AddBucket(Bucket bucket) {
  absl::MutexLock lock(&mu_);
  buckets_[bucket.storage_id] = std::move(bucket);
}

absl::StatusOr<AccessKey> TestDirectory::FindAccessKey(std::string_view access_key_id) {
  absl::MutexLock lock(&mu_);
  auto it = keys_.find(std::string(access_key_id));
  if (it == keys_.end()) {
    return absl::NotFoundError("access key not found");
  }
  return it->second;
}

absl::StatusOr<Bucket> TestDirectory::FindBucket(std::string_view storage_id) {
  absl::MutexLock lock(&mu_);
  auto it = buckets_.find(std::string(storage_id));
  if (it == buckets_.end()) {
    return absl::NotFoundError("storage not found");
  }
  return it->second;
}

absl::StatusOr<std::vector<Bucket>> TestDirectory::ListBuckets(std::string_view tenant_id) {
  absl::MutexLock lock(&mu_);
  std::vector<Bucket> out;
  for (const auto& [id, bucket] : buckets_) {
    if (tenant_id.empty() || bucket.tenant_id == tenant_id) {
      out.push_back(bucket);
    }
  }
  std::sort(out.begin(), out.end(),
            [](const Bucket& a, const Bucket& b) { return a.storage_id < b.storage_id; });
  return out;
}

S3TestStack::S3TestStack(ServerOptions options, StackBackend backend_kind)
    : data_root_(temp_.path() / "data"), signing_key_(authz::Ed25519Key::Generate()) {
  if (backend_kind == StackBackend::kCeph) {
    backend_ = NewTestCephBackend(temp_.path());
  } else {
    auto backend = local::NewLocalBackend({.data_root = data_root_.string(), .sync_writes = false});
    Check(backend.status(), "local backend");
    backend_ = *std::move(backend);
  }
  backends_ = std::make_unique<Backends>(std::vector<Backend*>{backend_.get()});
  // Volumes on a shared cluster get names of their own; the local data root is this stack's.
  const std::string suffix =
      backend_kind == StackBackend::kCeph ? "_" + local::RandomStagingName("").substr(0, 10) : "";

  const int64_t kRoomy = int64_t{64} << 30;
  struct BucketSpec {
    std::string_view id;
    std::string tenant;
    VolumeLimits limits;
  };
  for (const BucketSpec& spec : {BucketSpec{kBucketA, "ten_a", {kRoomy, 1'000'000}},
                                 BucketSpec{kBucketB, "ten_b", {kRoomy, 1'000'000}},
                                 BucketSpec{kBucketSmall, "ten_a", {64 << 10, 4}}}) {
    const std::string volume_id = std::string(spec.id) + suffix;
    Check(backend_->CreateVolume(volume_id, spec.limits), "create volume");
    volume_ids_.push_back(volume_id);
    directory_.AddBucket(Bucket{std::string(spec.id), spec.tenant, clock_.Now() - absl::Hours(1),
                                spec.limits, volume_id, std::string(backend_->backend_class())});
  }
  auto key = [&](const TestKey& k, std::string_view bucket, std::string tenant, bool read_only,
                 absl::Time expire) {
    directory_.AddKey(AccessKey{
        k.id, k.secret, authz::StorageGrant{std::string(bucket), tenant, read_only}, expire});
  };
  key(kKeyRw, kBucketA, "ten_a", false, absl::InfiniteFuture());
  key(kKeyRo, kBucketA, "ten_a", true, absl::InfiniteFuture());
  key(kKeyB, kBucketB, "ten_b", false, absl::InfiniteFuture());
  key(kKeyExpired, kBucketA, "ten_a", false, clock_.Now() - absl::Hours(1));
  key(kKeySmall, kBucketSmall, "ten_a", false, absl::InfiniteFuture());

  tokens_ = authz::NewJwksAuthenticator(std::make_unique<StaticJwks>(authz::JwksJson(
                                            {{std::string(kKid), signing_key_.PublicRaw()}})),
                                        clock_);
  tls_ = !options.tls_cert_file.empty();
  options.host = "127.0.0.1";
  options.port = 0;
  server_ = std::make_unique<Server>(std::move(options), directory_, *backends_, *tokens_, clock_);
  Check(server_->Start(), "start");
}

S3TestStack::~S3TestStack() {
  server_->Stop();
  if (backend_->backend_class() == "ceph") {
    for (const std::string& id : volume_ids_) {
      Check(backend_->DeleteVolume(id), "delete volume");
    }
  }
}

std::string S3TestStack::endpoint() const {
  return absl::StrCat(tls_ ? "https" : "http", "://127.0.0.1:", port());
}

std::filesystem::path S3TestStack::VolumePath(std::string_view bucket) {
  auto found = directory_.FindBucket(bucket);
  Check(found.status(), "bucket");
  auto source = backend_->MountSourceFor(found->volume_id, "node");
  Check(source.status(), "mount source");
  return source->host_path;
}

std::string S3TestStack::BearerToken(std::string_view tenant, authz::Role role) {
  authz::Claims claims;
  claims.kid = std::string(kKid);
  claims.iss = "gpuaas-auth";
  claims.sub = "usr_test";
  claims.tenant = std::string(tenant);
  claims.role = role;
  claims.iat = clock_.Now();
  claims.exp = clock_.Now() + absl::Minutes(15);
  claims.jti = "tok_test";
  return "Bearer " + authz::SignJwt(claims, signing_key_);
}

}  // namespace gpuaas::storage::s3::testing

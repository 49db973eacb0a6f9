#include "services/storage/s3/testing/test_stack.h"

#include <cstdlib>
#include <iostream>

#include "absl/strings/str_cat.h"
#include "services/storage/local/local_backend.h"

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

}  // namespace

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

S3TestStack::S3TestStack(ServerOptions options)
    : data_root_(temp_.path() / "data"), signing_key_(authz::Ed25519Key::Generate()) {
  auto backend = local::NewLocalBackend({.data_root = data_root_.string(), .sync_writes = false});
  Check(backend.status(), "local backend");
  backend_ = *std::move(backend);

  const int64_t kRoomy = int64_t{64} << 30;
  struct BucketSpec {
    std::string_view id;
    std::string tenant;
    VolumeLimits limits;
  };
  for (const BucketSpec& spec : {BucketSpec{kBucketA, "ten_a", {kRoomy, 1'000'000}},
                                 BucketSpec{kBucketB, "ten_b", {kRoomy, 1'000'000}},
                                 BucketSpec{kBucketSmall, "ten_a", {64 << 10, 4}}}) {
    Check(backend_->CreateVolume(spec.id, spec.limits), "create volume");
    directory_.AddBucket(Bucket{std::string(spec.id), spec.tenant, clock_.Now() - absl::Hours(1),
                                spec.limits, std::string(spec.id)});
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
  server_ = std::make_unique<Server>(std::move(options), directory_, *backend_, *tokens_, clock_);
  Check(server_->Start(), "start");
}

S3TestStack::~S3TestStack() { server_->Stop(); }

std::string S3TestStack::endpoint() const {
  return absl::StrCat(tls_ ? "https" : "http", "://127.0.0.1:", port());
}

std::filesystem::path S3TestStack::VolumePath(std::string_view bucket) {
  auto source = backend_->MountSourceFor(bucket, "node");
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

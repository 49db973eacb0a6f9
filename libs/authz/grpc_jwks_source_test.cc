#include "libs/authz/grpc_jwks_source.h"

#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server.h>
#include <grpcpp/server_builder.h>
#include <gtest/gtest.h>

#include "absl/synchronization/notification.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/authz/jwt.h"
#include "libs/common/base64url.h"

namespace gpuaas::authz {
namespace {

namespace pb = ::gpuaas::auth::v1;

// Canned GetJwks replies; every other method stays unimplemented.
class FakeAuthService final : public pb::AuthService::Service {
 public:
  grpc::Status GetJwks(grpc::ServerContext*, const pb::GetJwksRequest*,
                       pb::GetJwksResponse* resp) override {
    if (block_ != nullptr) {
      block_->WaitForNotification();
    }
    if (!status_.ok()) {
      return status_;
    }
    *resp = reply_;
    return grpc::Status::OK;
  }

  pb::GetJwksResponse reply_;
  grpc::Status status_;
  absl::Notification* block_ = nullptr;
};

class GrpcJwksSourceTest : public ::testing::Test {
 protected:
  GrpcJwksSourceTest() {
    grpc::ServerBuilder builder;
    builder.RegisterService(&service_);
    server_ = builder.BuildAndStart();
    channel_ = server_->InProcessChannel(grpc::ChannelArguments());
  }
  // The blocked handler may only start after the client gave up, so the notification it waits
  // on must outlive the test body; Shutdown waits for that handler.
  ~GrpcJwksSourceTest() override {
    if (!release_.HasBeenNotified()) {
      release_.Notify();
    }
    server_->Shutdown();
  }

  absl::Notification release_;
  FakeAuthService service_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(GrpcJwksSourceTest, ReturnsTheCanonicalDocument) {
  Ed25519Key key = Ed25519Key::Generate();
  const std::string json = JwksJson({{"k1", key.PublicRaw()}});
  service_.reply_.set_json(json);
  auto source = NewGrpcJwksSource(channel_);
  absl::StatusOr<std::string> got = source->FetchJwks();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(*got, json);
}

TEST_F(GrpcJwksSourceTest, RebuildsTheDocumentFromKeysWhenJsonIsEmpty) {
  Ed25519Key key = Ed25519Key::Generate();
  pb::Jwk* jwk = service_.reply_.add_keys();
  jwk->set_kid("k1");
  jwk->set_kty("OKP");
  jwk->set_crv("Ed25519");
  jwk->set_x(Base64UrlEncode(key.PublicRaw()));
  auto source = NewGrpcJwksSource(channel_);
  absl::StatusOr<std::string> got = source->FetchJwks();
  ASSERT_TRUE(got.ok()) << got.status();
  absl::StatusOr<std::vector<PublicJwk>> keys = ParseJwksJson(*got);
  ASSERT_TRUE(keys.ok()) << keys.status();
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].kid, "k1");
  EXPECT_EQ((*keys)[0].public_raw, key.PublicRaw());
}

TEST_F(GrpcJwksSourceTest, KeepsTheGrpcCode) {
  service_.status_ = grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "no");
  absl::StatusOr<std::string> got = NewGrpcJwksSource(channel_)->FetchJwks();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kPermissionDenied);
}

TEST_F(GrpcJwksSourceTest, DeadlineExceeded) {
  service_.block_ = &release_;
  absl::StatusOr<std::string> got =
      NewGrpcJwksSource(channel_, absl::Milliseconds(50))->FetchJwks();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kDeadlineExceeded);
}

TEST(GrpcJwksSource, UnreachableIsUnavailable) {
  auto channel = grpc::CreateChannel("unix:/nonexistent/gpuaas-authz-test.sock",
                                     grpc::InsecureChannelCredentials());
  absl::StatusOr<std::string> got = NewGrpcJwksSource(channel)->FetchJwks();
  EXPECT_EQ(got.status().code(), absl::StatusCode::kUnavailable);
}

}  // namespace
}  // namespace gpuaas::authz

// NodeTokens against in-process fakes of the auth service: one mint per node and purpose while
// the token is fresh, the service's own token on the mint (never on what is minted), a new mint
// after most of the life has passed or after Invalidate, and auth's refusal passed on.
#include "libs/client/node_tokens.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/common/clock.h"
#include "libs/common/proto_time.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::IsOkAndHolds;
using ::gpuaas::testing::StatusIs;
constexpr auto kLogs = authpb::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS;

class FakeAuth final : public authpb::AuthService::Service {
 public:
  grpc::Status ExchangeApiKey(grpc::ServerContext*, const authpb::ExchangeApiKeyRequest*,
                              authpb::ExchangeApiKeyResponse* resp) override {
    resp->set_access_token("service-token");
    *resp->mutable_expire_time() = ToProtoTime(absl::Now() + absl::Hours(1));
    return grpc::Status::OK;
  }
};

// Mints "<node>-<n>" (the n-th mint), living 5 minutes from `clock`; notes who asked.
class FakeMinter final : public authpb::NodeTokenService::Service {
 public:
  explicit FakeMinter(const Clock& clock) : clock_(clock) {}
  grpc::Status IssueNodeToken(grpc::ServerContext* ctx, const authpb::IssueNodeTokenRequest* req,
                              authpb::IssueNodeTokenResponse* resp) override {
    absl::MutexLock lock(&mu_);
    auto it = ctx->client_metadata().find("authorization");
    callers_.push_back(it == ctx->client_metadata().end()
                           ? ""
                           : std::string(it->second.data(), it->second.size()));
    if (!reply_.ok()) return reply_;
    resp->set_access_token(req->node_id() + "-" + std::to_string(callers_.size()));
    *resp->mutable_expire_time() = ToProtoTime(clock_.Now() + absl::Minutes(5));
    return grpc::Status::OK;
  }
  std::vector<std::string> callers() {
    absl::MutexLock lock(&mu_);
    return callers_;
  }
  void set_reply(grpc::Status s) {
    absl::MutexLock lock(&mu_);
    reply_ = std::move(s);
  }

 private:
  const Clock& clock_;
  absl::Mutex mu_;
  std::vector<std::string> callers_ ABSL_GUARDED_BY(mu_);
  grpc::Status reply_ ABSL_GUARDED_BY(mu_) = grpc::Status::OK;
};

class NodeTokensTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&auth_);
    builder.RegisterService(&minter_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = *OpenChannel("127.0.0.1:" + std::to_string(port), TlsOptions{});
    auth_client_ = std::make_unique<AuthClient>(channel_);
    service_ = std::make_unique<AccessTokens>(*auth_client_, "key.secret", clock_);
    tokens_ = std::make_unique<NodeTokens>(channel_, *service_, clock_);
  }
  void TearDown() override { server_->Shutdown(); }

  FakeClock clock_;
  FakeAuth auth_;
  FakeMinter minter_{clock_};
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<AuthClient> auth_client_;
  std::unique_ptr<AccessTokens> service_;
  std::unique_ptr<NodeTokens> tokens_;
};

TEST_F(NodeTokensTest, OneMintPerNodeWhileFreshWithTheServicesToken) {
  EXPECT_THAT(tokens_->Get("node-a", kLogs), IsOkAndHolds(std::string("node-a-1")));
  EXPECT_THAT(tokens_->Get("node-a", kLogs), IsOkAndHolds(std::string("node-a-1")));
  EXPECT_THAT(tokens_->Get("node-b", kLogs), IsOkAndHolds(std::string("node-b-2")));
  EXPECT_EQ(minter_.callers(),
            (std::vector<std::string>{"Bearer service-token", "Bearer service-token"}));
}

TEST_F(NodeTokensTest, MintsAgainNearTheEndOfLifeOrOnceRefused) {
  ASSERT_THAT(tokens_->Get("node-a", kLogs), IsOkAndHolds(std::string("node-a-1")));
  clock_.Advance(absl::Minutes(3));
  EXPECT_THAT(tokens_->Get("node-a", kLogs), IsOkAndHolds(std::string("node-a-1")));
  clock_.Advance(absl::Minutes(1) + absl::Seconds(1));  // past four fifths of 5 minutes
  EXPECT_THAT(tokens_->Get("node-a", kLogs), IsOkAndHolds(std::string("node-a-2")));
  tokens_->Invalidate("node-a", kLogs);
  EXPECT_THAT(tokens_->Get("node-a", kLogs), IsOkAndHolds(std::string("node-a-3")));
}

TEST_F(NodeTokensTest, AuthsRefusalIsPassedOn) {
  minter_.set_reply(grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "not a service"));
  EXPECT_THAT(tokens_->Get("node-a", kLogs), StatusIs(absl::StatusCode::kPermissionDenied));
}

}  // namespace
}  // namespace gpuaas::client

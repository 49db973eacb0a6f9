// The node- and proxy-facing clients' shared machinery, against in-process fakes of the auth
// service (for the service token) and of NodeWorkloadService: every call carries the token
// from AccessTokens and none without, a refused token is exchanged again, a token that cannot
// be had fails the call without reaching the service, and a Cancellation ends a blocked watch
// (and fails at once a call started after it). The clients over the real services:
// tests/agent, tests/proxy, tests/platform/instance_logs_test.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/client/cancellation.h"
#include "libs/client/channel.h"
#include "libs/client/node_workload_client.h"
#include "libs/common/clock.h"
#include "libs/common/proto_time.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::StatusIs;

// Exchanges any key for "t-<n>", the n-th exchange; or fails with `reply_`.
class FakeAuth final : public authpb::AuthService::Service {
 public:
  grpc::Status ExchangeApiKey(grpc::ServerContext*, const authpb::ExchangeApiKeyRequest*,
                              authpb::ExchangeApiKeyResponse* resp) override {
    absl::MutexLock lock(&mu_);
    if (!reply_.ok()) return reply_;
    resp->set_access_token("t-" + std::to_string(++exchanges_));
    *resp->mutable_expire_time() = ToProtoTime(absl::Now() + absl::Minutes(15));
    return grpc::Status::OK;
  }
  int exchanges() const {
    absl::MutexLock lock(&mu_);
    return exchanges_;
  }
  void set_reply(grpc::Status s) {
    absl::MutexLock lock(&mu_);
    reply_ = std::move(s);
  }

 private:
  mutable absl::Mutex mu_;
  int exchanges_ ABSL_GUARDED_BY(mu_) = 0;
  grpc::Status reply_ ABSL_GUARDED_BY(mu_) = grpc::Status::OK;
};

// Notes each call's authorization header; ReportWorkloads answers `report_reply`, a watch
// sends one set and then holds the stream open until its caller goes away.
class FakeNodeWorkloads final : public instancepb::NodeWorkloadService::Service {
 public:
  grpc::Status WatchWorkloads(grpc::ServerContext* ctx, const instancepb::WatchWorkloadsRequest*,
                              grpc::ServerWriter<instancepb::WorkloadSet>* writer) override {
    Note(*ctx);
    writer->Write(instancepb::WorkloadSet());
    while (!ctx->IsCancelled()) absl::SleepFor(absl::Milliseconds(5));
    return grpc::Status::CANCELLED;
  }
  grpc::Status ReportWorkloads(grpc::ServerContext* ctx, const instancepb::ReportWorkloadsRequest*,
                               instancepb::ReportWorkloadsResponse*) override {
    Note(*ctx);
    absl::MutexLock lock(&mu_);
    return report_reply;
  }
  std::vector<std::optional<std::string>> seen() const {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

  grpc::Status report_reply = grpc::Status::OK;

 private:
  void Note(const grpc::ServerContext& ctx) {
    std::optional<std::string> authorization;
    auto it = ctx.client_metadata().find("authorization");
    if (it != ctx.client_metadata().end()) {
      authorization = std::string(it->second.data(), it->second.size());
    }
    absl::MutexLock lock(&mu_);
    seen_.push_back(authorization);
  }

  mutable absl::Mutex mu_;
  std::vector<std::optional<std::string>> seen_ ABSL_GUARDED_BY(mu_);
};

class NodeClientsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&auth_service_);
    builder.RegisterService(&workloads_);
    server_ = builder.BuildAndStart();
    ASSERT_NE(server_, nullptr);
    channel_ = *OpenChannel("127.0.0.1:" + std::to_string(port), TlsOptions{});
  }
  void TearDown() override { server_->Shutdown(); }

  FakeAuth auth_service_;
  FakeNodeWorkloads workloads_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  SystemClock clock_;
};

TEST_F(NodeClientsTest, CallsCarryTheServiceTokenAndNoneWithoutTokens) {
  AuthClient auth(channel_);
  AccessTokens tokens(auth, "key-id.secret", clock_);
  EXPECT_OK(NodeWorkloadClient(channel_, &tokens).ReportWorkloads({}));
  EXPECT_OK(NodeWorkloadClient(channel_, nullptr).ReportWorkloads({}));
  EXPECT_EQ(workloads_.seen(),
            (std::vector<std::optional<std::string>>{"Bearer t-1", std::nullopt}));
}

TEST_F(NodeClientsTest, ARefusedTokenIsExchangedAgain) {
  AuthClient auth(channel_);
  AccessTokens tokens(auth, "key-id.secret", clock_);
  NodeWorkloadClient client(channel_, &tokens);
  workloads_.report_reply = grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "expired");
  EXPECT_THAT(client.ReportWorkloads({}), StatusIs(absl::StatusCode::kUnauthenticated));
  workloads_.report_reply = grpc::Status::OK;
  EXPECT_OK(client.ReportWorkloads({}));
  EXPECT_EQ(auth_service_.exchanges(), 2);
  EXPECT_EQ(workloads_.seen().back(), "Bearer t-2");
}

TEST_F(NodeClientsTest, NoTokenFailsTheCallUnavailableWithoutReachingTheService) {
  AuthClient auth(channel_);
  AccessTokens tokens(auth, "key-id.secret", clock_);
  auth_service_.set_reply(grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "revoked"));
  NodeWorkloadClient client(channel_, &tokens);
  EXPECT_THAT(client.ReportWorkloads({}), StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_THAT(client.WatchWorkloads({}, [](const auto&) { return true; }),
              StatusIs(absl::StatusCode::kUnavailable));
  EXPECT_TRUE(workloads_.seen().empty());
}

TEST_F(NodeClientsTest, CancellationEndsABlockedWatchAndFailsLaterCallsAtOnce) {
  NodeWorkloadClient client(channel_, nullptr);
  Cancellation cancel;
  absl::Notification got_set;
  absl::Status watched;
  std::thread watch([&] {
    watched = client.WatchWorkloads(
        {},
        [&](const instancepb::WorkloadSet&) {
          if (!got_set.HasBeenNotified()) got_set.Notify();
          return true;
        },
        CallContext().set_cancellation(cancel));
  });
  ASSERT_TRUE(got_set.WaitForNotificationWithTimeout(absl::Seconds(10)));
  cancel.Cancel();
  watch.join();
  EXPECT_THAT(watched, StatusIs(absl::StatusCode::kCancelled));
  EXPECT_THAT(client.ReportWorkloads({}, CallContext().set_cancellation(cancel)),
              StatusIs(absl::StatusCode::kCancelled));
  EXPECT_EQ(workloads_.seen().size(), 1u);
}

}  // namespace
}  // namespace gpuaas::client

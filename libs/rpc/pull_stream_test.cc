// Pulled server streams (RunPullStream) through real gRPC over loopback: authentication and
// open's errors, every message in order then the source's end or error, a source blocked in
// Next released by the client's cancel and by Server::Shutdown (UNAVAILABLE).
#include "libs/rpc/pull_stream.h"

#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "gpuaas/testing/v1/echo.grpc.pb.h"
#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/server.h"

namespace gpuaas::rpc {
namespace {

namespace pb = ::gpuaas::testing::v1;
using test::FakeAuthenticator;

constexpr absl::Duration kTimeout = absl::Seconds(120);
constexpr char kToken[] = "good-alice@acme";

// What the sources saw, for the test to wait on.
struct Seen {
  absl::Notification blocked;    // a "block" source is inside Next
  absl::Notification cancelled;  // ... and was cancelled
  std::atomic<int> destroyed{0};
};

// "count:N" sends m0..m(N-1) and ends OK; "fail" sends one and fails DATA_LOSS; "block" blocks
// in Next until cancelled.
class Source final : public PullSource<pb::EchoResponse> {
 public:
  Source(std::string mode, Seen& seen) : mode_(std::move(mode)), seen_(seen) {}
  ~Source() override { ++seen_.destroyed; }

  absl::StatusOr<std::optional<pb::EchoResponse>> Next() override {
    if (mode_ == "block") {
      seen_.blocked.Notify();
      absl::MutexLock lock(&mu_);
      mu_.Await(absl::Condition(&cancelled_));
      seen_.cancelled.Notify();
      return absl::CancelledError("cancelled");
    }
    int count = 1;
    if (absl::StartsWith(mode_, "count:")) (void)absl::SimpleAtoi(mode_.substr(6), &count);
    if (mode_ == "fail" && sent_ == 1) return absl::DataLossError("the source broke");
    if (sent_ == count) return std::nullopt;
    pb::EchoResponse m;
    m.set_message(absl::StrCat("m", sent_++));
    return m;
  }

  void Cancel() override {
    absl::MutexLock lock(&mu_);
    cancelled_ = true;
  }

 private:
  const std::string mode_;
  Seen& seen_;
  int sent_ = 0;
  absl::Mutex mu_;
  bool cancelled_ ABSL_GUARDED_BY(mu_) = false;
};

class PullService final : public pb::EchoPushService::CallbackService {
 public:
  PullService(Handler& handler, Seen& seen) : handler_(handler), seen_(seen) {}

  grpc::ServerWriteReactor<pb::EchoResponse>* Subscribe(grpc::CallbackServerContext* ctx,
                                                        const pb::EchoRequest* req) override {
    return RunPullStream<pb::EchoRequest, pb::EchoResponse>(
        handler_, ctx, req,
        [this](const authz::Principal&, const pb::EchoRequest& r,
               grpc::CallbackServerContext&) -> absl::StatusOr<PullSourcePtr<pb::EchoResponse>> {
          if (r.message() == "refuse") return absl::PermissionDeniedError("refused");
          return std::make_unique<Source>(r.message(), seen_);
        });
  }

 private:
  Handler& handler_;
  Seen& seen_;
};

class PullStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.name = "pull";
    options.listen_address = "127.0.0.1:0";
    options.metrics_address = "";
    options.worker_threads = 2;
    server_ = std::make_unique<Server>(options, std::make_unique<FakeAuthenticator>());
    service_ = std::make_unique<PullService>(server_->handler(), seen_);
    server_->AddService(service_.get());
    absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
    stub_ = pb::EchoPushService::NewStub(test::LocalChannel(server_->port()));
  }

  void TearDown() override { server_.reset(); }

  // The messages and the final status of one stream.
  std::pair<std::vector<std::string>, grpc::Status> ReadAll(const std::string& mode,
                                                            std::string_view token = kToken) {
    auto ctx = test::NewClientContext(kTimeout, token);
    pb::EchoRequest req;
    req.set_message(mode);
    auto reader = stub_->Subscribe(ctx.get(), req);
    std::vector<std::string> got;
    for (pb::EchoResponse m; reader->Read(&m);) got.push_back(m.message());
    return {got, reader->Finish()};
  }

  Seen seen_;
  std::unique_ptr<Server> server_;
  std::unique_ptr<PullService> service_;
  std::unique_ptr<pb::EchoPushService::Stub> stub_;
};

TEST_F(PullStreamTest, SendsEveryMessageInOrderThenEndsOk) {
  auto [got, status] = ReadAll("count:500");
  EXPECT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(got.size(), 500u);
  for (int i = 0; i < 500; ++i) EXPECT_EQ(got[i], absl::StrCat("m", i));
}

TEST_F(PullStreamTest, RefusesWithoutTokenAndEndsWithOpensAndTheSourcesErrors) {
  EXPECT_EQ(ReadAll("count:1", "").second.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(ReadAll("refuse").second.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  auto [got, status] = ReadAll("fail");
  EXPECT_EQ(got, std::vector<std::string>{"m0"});
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DATA_LOSS);
  EXPECT_EQ(status.error_message(), "the source broke");
}

TEST_F(PullStreamTest, TheClientsCancelReleasesABlockedSource) {
  auto ctx = test::NewClientContext(kTimeout, kToken);
  pb::EchoRequest req;
  req.set_message("block");
  auto reader = stub_->Subscribe(ctx.get(), req);
  ASSERT_TRUE(seen_.blocked.WaitForNotificationWithTimeout(kTimeout));
  ctx->TryCancel();
  EXPECT_TRUE(seen_.cancelled.WaitForNotificationWithTimeout(kTimeout));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::CANCELLED);
}

TEST_F(PullStreamTest, ShutdownEndsABlockedStreamUnavailable) {
  auto ctx = test::NewClientContext(kTimeout, kToken);
  pb::EchoRequest req;
  req.set_message("block");
  auto reader = stub_->Subscribe(ctx.get(), req);
  ASSERT_TRUE(seen_.blocked.WaitForNotificationWithTimeout(kTimeout));
  server_->Shutdown();
  EXPECT_TRUE(seen_.cancelled.WaitForNotificationWithTimeout(kTimeout));
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace gpuaas::rpc

// Pushed server streams (Handler::RunServerStream) through real gRPC over loopback:
// authentication, messages sent during open, ordering under concurrent producers, the end of
// the stream from either side, shutdown, and the bound on a slow client's queue.
#include "libs/rpc/server_stream.h"

#include <gtest/gtest.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gpuaas/testing/v1/echo.grpc.pb.h"
#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/server.h"

namespace gpuaas::rpc {
namespace {

namespace pb = ::gpuaas::testing::v1;
using test::FakeAuthenticator;

constexpr absl::Duration kTimeout = absl::Seconds(120);
constexpr char kToken[] = "good-alice@acme";

// Keeps every stream's writer and how each session ended, for the test to drive.
class EchoPushService final : public pb::EchoPushService::CallbackService {
 public:
  explicit EchoPushService(Handler& handler) : handler_(handler) {}

  grpc::ServerWriteReactor<pb::EchoResponse>* Subscribe(grpc::CallbackServerContext* ctx,
                                                        const pb::EchoRequest* req) override {
    return handler_.RunServerStream<pb::EchoRequest, pb::EchoResponse>(
        ctx, req,
        [this](const authz::Principal& p, const pb::EchoRequest& r,
               std::shared_ptr<StreamWriter<pb::EchoResponse>> out)
            -> absl::StatusOr<std::unique_ptr<PushSession>> {
          if (!r.throw_message().empty()) {
            throw std::runtime_error(r.throw_message());
          }
          if (r.message() == "refuse") {
            return absl::PermissionDeniedError("refused");
          }
          // What open sends goes out first, once open returned.
          pb::EchoResponse hello;
          hello.set_message("hello " + r.message());
          hello.set_principal(PrincipalLabel(p));
          out->Send(hello);
          absl::MutexLock lock(&mu_);
          writers_.push_back(out);
          return std::make_unique<Session>(*this);
        });
  }

  // Waits for the n-th stream (0-based) to have opened and returns its writer.
  std::shared_ptr<StreamWriter<pb::EchoResponse>> Writer(size_t n) {
    absl::MutexLock lock(&mu_);
    auto opened = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return writers_.size() > n; };
    mu_.AwaitWithTimeout(absl::Condition(&opened), kTimeout);
    return writers_.size() > n ? writers_[n] : nullptr;
  }

  std::vector<absl::Status> WaitForEnds(size_t n) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return ends_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), kTimeout);
    return ends_;
  }

 private:
  class Session final : public PushSession {
   public:
    explicit Session(EchoPushService& service) : service_(service) {}
    void OnEnd(const absl::Status& status) override {
      absl::MutexLock lock(&service_.mu_);
      service_.ends_.push_back(status);
    }

   private:
    EchoPushService& service_;
  };

  Handler& handler_;
  absl::Mutex mu_;
  std::vector<std::shared_ptr<StreamWriter<pb::EchoResponse>>> writers_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> ends_ ABSL_GUARDED_BY(mu_);
};

pb::EchoResponse Message(const std::string& text) {
  pb::EchoResponse m;
  m.set_message(text);
  return m;
}

struct ClientStream {
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientReader<pb::EchoResponse>> reader;

  std::string Next() {
    pb::EchoResponse m;
    return reader->Read(&m) ? m.message() : "<end>";
  }
  grpc::Status ReadToEnd() {
    pb::EchoResponse ignored;
    while (reader->Read(&ignored)) {
    }
    return reader->Finish();
  }
};

class ServerStreamTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.name = "push";
    options.listen_address = "127.0.0.1:0";
    options.metrics_address = "";
    options.worker_threads = 2;
    server_ = std::make_unique<Server>(options, std::make_unique<FakeAuthenticator>());
    service_ = std::make_unique<EchoPushService>(server_->handler());
    server_->AddService(service_.get());
    absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
    stub_ = pb::EchoPushService::NewStub(test::LocalChannel(server_->port()));
  }

  void TearDown() override { server_.reset(); }

  ClientStream Subscribe(const std::string& message, std::string_view token = kToken,
                         const std::string& throw_message = "") {
    ClientStream s;
    s.ctx = test::NewClientContext(kTimeout, token);
    pb::EchoRequest req;
    req.set_message(message);
    req.set_throw_message(throw_message);
    s.reader = stub_->Subscribe(s.ctx.get(), req);
    return s;
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<EchoPushService> service_;
  std::unique_ptr<pb::EchoPushService::Stub> stub_;
};

TEST_F(ServerStreamTest, PushesInOrderAfterWhatOpenSentAndFinishesWithTheStatusGiven) {
  ClientStream s = Subscribe("bob");
  std::shared_ptr<StreamWriter<pb::EchoResponse>> out = service_->Writer(0);
  ASSERT_NE(out, nullptr);
  EXPECT_EQ(s.Next(), "hello bob");
  for (int i = 0; i < 3; ++i) {
    EXPECT_TRUE(out->Send(Message(absl::StrCat("m", i))));
  }
  out->Finish(absl::OutOfRangeError("compacted"));
  EXPECT_FALSE(out->Send(Message("late")));
  EXPECT_EQ(s.Next(), "m0");
  EXPECT_EQ(s.Next(), "m1");
  EXPECT_EQ(s.Next(), "m2");
  grpc::Status end = s.ReadToEnd();
  EXPECT_EQ(end.error_code(), grpc::StatusCode::OUT_OF_RANGE);
  EXPECT_EQ(end.error_message(), "compacted");
  std::vector<absl::Status> ends = service_->WaitForEnds(1);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_TRUE(absl::IsOutOfRange(ends[0])) << ends[0];
}

TEST_F(ServerStreamTest, RefusesWithoutTokenAndReportsOpenErrors) {
  EXPECT_EQ(Subscribe("x", "").ReadToEnd().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Subscribe("x", "bad-token").ReadToEnd().error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Subscribe("refuse").ReadToEnd().error_code(), grpc::StatusCode::PERMISSION_DENIED);
  grpc::Status thrown = Subscribe("x", kToken, "boom").ReadToEnd();
  EXPECT_EQ(thrown.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(thrown.error_message().find("boom"), std::string::npos) << "details stay in the log";
}

TEST_F(ServerStreamTest, ConcurrentProducersLoseNothingAndKeepEachOnesOrder) {
  ClientStream s = Subscribe("many");
  std::shared_ptr<StreamWriter<pb::EchoResponse>> out = service_->Writer(0);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(s.Next(), "hello many");
  constexpr int kProducers = 4;
  constexpr int kEach = 200;
  std::vector<std::thread> producers;
  for (int p = 0; p < kProducers; ++p) {
    producers.emplace_back([&out, p] {
      for (int i = 0; i < kEach; ++i) {
        out->Send(Message(absl::StrCat(p, ":", i)));
      }
    });
  }
  std::vector<int> next(kProducers, 0);
  for (int n = 0; n < kProducers * kEach; ++n) {
    std::string m = s.Next();
    ASSERT_NE(m, "<end>");
    const int p = m[0] - '0';
    ASSERT_EQ(m, absl::StrCat(p, ":", next[p])) << "producer " << p << " out of order";
    ++next[p];
  }
  for (std::thread& t : producers) {
    t.join();
  }
  out->Finish(absl::OkStatus());
  EXPECT_TRUE(s.ReadToEnd().ok());
}

TEST_F(ServerStreamTest, ClientCancelEndsTheSessionAndLaterSendsAreDropped) {
  ClientStream s = Subscribe("c");
  std::shared_ptr<StreamWriter<pb::EchoResponse>> out = service_->Writer(0);
  ASSERT_NE(out, nullptr);
  ASSERT_EQ(s.Next(), "hello c");
  s.ctx->TryCancel();
  std::vector<absl::Status> ends = service_->WaitForEnds(1);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_TRUE(absl::IsCancelled(ends[0])) << ends[0];
  EXPECT_FALSE(out->Send(Message("nobody listens")));
}

TEST_F(ServerStreamTest, ShutdownEndsOpenStreamsUnavailable) {
  ClientStream s = Subscribe("s");
  ASSERT_NE(service_->Writer(0), nullptr);
  ASSERT_EQ(s.Next(), "hello s");
  std::thread stop([this] { server_->Shutdown(); });
  EXPECT_EQ(s.ReadToEnd().error_code(), grpc::StatusCode::UNAVAILABLE);
  stop.join();
  std::vector<absl::Status> ends = service_->WaitForEnds(1);
  ASSERT_EQ(ends.size(), 1u);
  EXPECT_TRUE(absl::IsUnavailable(ends[0])) << ends[0];
}

TEST_F(ServerStreamTest, AClientThatDoesNotReadEndsResourceExhaustedInsteadOfGrowingTheQueue) {
  ClientStream s = Subscribe("slow");
  std::shared_ptr<StreamWriter<pb::EchoResponse>> out = service_->Writer(0);
  ASSERT_NE(out, nullptr);
  // Flow-control windows take some megabytes; then the queue fills to its bound.
  const std::string chunk(64 << 10, 'x');
  int accepted = 0;
  while (out->Send(Message(chunk))) {
    ++accepted;
    ASSERT_LT(accepted, 100000) << "the queue never filled";
  }
  EXPECT_GE(accepted, static_cast<int>(kDefaultPushQueue));
  EXPECT_EQ(s.ReadToEnd().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

}  // namespace
}  // namespace gpuaas::rpc

// The server and Handler through real gRPC over loopback: authentication, error mapping,
// health, metrics and graceful shutdown.
#include "libs/rpc/server.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/client/channel.h"
#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/metrics_scrape_test_util.h"

namespace gpuaas::rpc {
namespace {

using test::EchoService;
using test::Exposition;
using test::FakeAuthenticator;
using test::MetricLabels;
using test::pb::EchoRequest;
using test::pb::EchoResponse;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;

constexpr absl::Duration kCallTimeout = absl::Seconds(10);

class ServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ServerOptions options;
    options.name = "echo";
    options.listen_address = "127.0.0.1:0";
    options.metrics_address = "127.0.0.1:0";
    options.worker_threads = 2;
    server_ = std::make_unique<Server>(options, std::make_unique<FakeAuthenticator>());
    echo_ = std::make_unique<EchoService>(server_->handler());
    server_->AddService(echo_.get());
    absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
    ASSERT_GT(server_->port(), 0);
    channel_ = NewChannel();
    stub_ = test::pb::EchoService::NewStub(channel_);
  }

  void TearDown() override {
    if (echo_ != nullptr) {
      echo_->ReleaseBlockedCalls();
    }
    server_.reset();  // before echo_, which it serves
  }

  std::shared_ptr<grpc::Channel> NewChannel() const { return test::LocalChannel(server_->port()); }

  grpc::Status Echo(const EchoRequest& req, EchoResponse* resp, std::string_view token) {
    auto ctx = test::NewClientContext(kCallTimeout, token);
    return stub_->Echo(ctx.get(), req, resp);
  }

  Exposition Scrape() const {
    absl::StatusOr<Exposition> exposition = test::ScrapeExposition(server_->metrics_port());
    EXPECT_TRUE(exposition.ok()) << exposition.status();
    return exposition.value_or(Exposition());
  }

  std::unique_ptr<EchoService> echo_;
  std::unique_ptr<Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<test::pb::EchoService::Stub> stub_;
};

TEST_F(ServerTest, AuthenticatedCallSucceedsOnAWorkerThread) {
  EchoRequest req;
  req.set_message("hello");
  EchoResponse resp;
  grpc::Status s = Echo(req, &resp, "good-alice@acme");
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.message(), "hello");
  EXPECT_EQ(resp.principal(), "alice@acme");
  EXPECT_FALSE(echo_->ran_on_grpc_thread());
}

TEST_F(ServerTest, MissingTokenIsUnauthenticatedBeforeTheHandlerRuns) {
  EchoRequest req;
  EchoResponse resp;
  grpc::Status s = Echo(req, &resp, "");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(echo_->handled(), 0);
}

TEST_F(ServerTest, BadTokenIsUnauthenticatedBeforeTheHandlerRuns) {
  EchoRequest req;
  EchoResponse resp;
  grpc::Status s = Echo(req, &resp, "forged-token");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(echo_->handled(), 0);
}

TEST_F(ServerTest, HandlerStatusReachesTheClient) {
  EchoRequest req;
  req.set_error_code(static_cast<int>(grpc::StatusCode::NOT_FOUND));
  req.set_error_message("instance i-1 not found");
  EchoResponse resp;
  grpc::Status s = Echo(req, &resp, "good-alice@acme");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(s.error_message(), "instance i-1 not found");
}

TEST_F(ServerTest, ExceptionBecomesInternalWithAGenericMessage) {
  EchoRequest req;
  req.set_throw_message("pqxx: password=hunter2 connection refused");
  EchoResponse resp;
  grpc::Status s = Echo(req, &resp, "good-alice@acme");
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(s.error_message(), "internal error");
  EXPECT_THAT(s.error_details(), Not(HasSubstr("hunter2")));
}

TEST_F(ServerTest, PublicMethodNeedsNoToken) {
  EchoRequest req;
  req.set_message("anyone");
  EchoResponse resp;
  auto ctx = test::NewClientContext(kCallTimeout);
  grpc::Status s = stub_->PublicEcho(ctx.get(), req, &resp);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.message(), "anyone");
  EXPECT_EQ(resp.principal(), "");
}

TEST_F(ServerTest, PublicMethodExceptionBecomesInternal) {
  EchoRequest req;
  req.set_throw_message("boom");
  EchoResponse resp;
  auto ctx = test::NewClientContext(kCallTimeout);
  grpc::Status s = stub_->PublicEcho(ctx.get(), req, &resp);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(s.error_message(), "internal error");
}

TEST_F(ServerTest, HealthReportsServingForTheServerAndEachService) {
  EXPECT_EQ(test::CheckHealth(channel_, "").value_or(-1), 1);
  EXPECT_EQ(test::CheckHealth(channel_, "gpuaas.testing.v1.EchoService").value_or(-1), 1);
  // Reflection is registered (and so marked too).
  EXPECT_EQ(test::CheckHealth(channel_, "grpc.reflection.v1alpha.ServerReflection").value_or(-1),
            1);
  absl::StatusOr<int> unknown = test::CheckHealth(channel_, "no.such.Service");
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);
}

TEST_F(ServerTest, MetricsCountCallsErrorsAndLatencyOfEveryService) {
  EchoRequest req;
  EchoResponse resp;
  ASSERT_TRUE(Echo(req, &resp, "good-alice@acme").ok());
  ASSERT_TRUE(Echo(req, &resp, "good-bob@acme").ok());
  ASSERT_EQ(Echo(req, &resp, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  ASSERT_TRUE(test::CheckHealth(channel_, "").ok());

  Exposition e = Scrape();
  const MetricLabels kEcho = {{"service", "gpuaas.testing.v1.EchoService"}, {"method", "Echo"}};
  MetricLabels unauthenticated = kEcho;
  unauthenticated.emplace("code", "UNAUTHENTICATED");
  EXPECT_THAT(e.Value("gpuaas_rpc_requests_total", kEcho), Optional(3.0));
  EXPECT_THAT(e.Value("gpuaas_rpc_errors_total", unauthenticated), Optional(1.0));
  EXPECT_THAT(e.Bucket("gpuaas_rpc_latency_seconds", kEcho, INFINITY), Optional(3.0));
  EXPECT_THAT(e.Value("gpuaas_rpc_latency_seconds_count", kEcho), Optional(3.0));
  EXPECT_THAT(e.Value("gpuaas_rpc_requests_total",
                      {{"service", "grpc.health.v1.Health"}, {"method", "Check"}}),
              Optional(1.0));
  EXPECT_EQ(e.Type("gpuaas_rpc_latency_seconds"), "histogram");
  EXPECT_GT(e.Value("process_resident_memory_bytes").value_or(0), 0);
  EXPECT_THAT(e.Value("gpuaas_rpc_in_flight"), Optional(0.0));
}

TEST_F(ServerTest, ShutdownLetsAnInFlightCallFinish) {
  EchoRequest req;
  req.set_message("slow");
  req.set_block(true);
  EchoResponse resp;
  auto ctx = test::NewClientContext(kCallTimeout, "good-alice@acme");
  std::promise<grpc::Status> done;
  stub_->async()->Echo(ctx.get(), &req, &resp,
                       [&done](grpc::Status s) { done.set_value(std::move(s)); });
  echo_->blocked_call_started().WaitForNotification();

  std::thread shutdown([this] { server_->Shutdown(); });
  // Wait until the drain has begun: health turns NOT_SERVING or new calls are refused.
  while (true) {
    absl::StatusOr<int> health = test::CheckHealth(NewChannel(), "");
    if (!health.ok() || *health != 1) {
      break;
    }
    std::this_thread::yield();
  }
  echo_->ReleaseBlockedCalls();
  grpc::Status s = done.get_future().get();
  shutdown.join();
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(resp.message(), "slow");
}

// A replica channel (libs/client) watches health and leaves the server out once NOT_SERVING
// reaches it; until then it may still send calls, so the server takes calls a while longer.
TEST_F(ServerTest, ShutdownServesOnAfterNotServingWhileAReplicaChannelWatches) {
  const std::string self = absl::StrCat("127.0.0.1:", server_->port());
  absl::StatusOr<std::shared_ptr<grpc::Channel>> replicas =
      client::OpenChannel(absl::StrCat(self, ",", self), {});
  ASSERT_TRUE(replicas.ok()) << replicas.status();
  auto watched = test::pb::EchoService::NewStub(*replicas);
  EchoRequest req;
  req.set_message("hi");
  EchoResponse resp;
  // Picked only once its health watch reported SERVING: the watch is open now.
  ASSERT_TRUE(
      watched->Echo(test::NewClientContext(kCallTimeout, "good-alice@acme").get(), req, &resp)
          .ok());
  ASSERT_TRUE(Echo(req, &resp, "good-alice@acme").ok());  // channel_ connected

  const absl::Time start = absl::Now();
  std::thread shutdown([this] { server_->Shutdown(); });
  while (test::CheckHealth(NewChannel(), "").value_or(0) == 1) {
    std::this_thread::yield();
  }
  const grpc::Status after_not_serving = Echo(req, &resp, "good-alice@acme");
  shutdown.join();
  EXPECT_TRUE(after_not_serving.ok()) << after_not_serving.error_message();
  EXPECT_GE(absl::Now() - start, absl::Milliseconds(500));
}

TEST_F(ServerTest, WaitReturnsAfterShutdown) {
  std::thread waiter([this] { server_->Wait(); });
  server_->Shutdown();
  waiter.join();
  // Nothing listens any more.
  EXPECT_FALSE(test::CheckHealth(NewChannel(), "").ok());
}

TEST_F(ServerTest, WaitReturnsOnSigterm) {
  ASSERT_EQ(kill(getpid(), SIGTERM), 0);
  server_->Wait();  // the signal byte is waiting in the pipe even if it landed first
  EXPECT_FALSE(test::CheckHealth(NewChannel(), "").ok());
}

TEST_F(ServerTest, SecondServerOnTheSamePortIsUnavailable) {
  ServerOptions options;
  options.name = "dup";
  options.listen_address = absl::StrCat("127.0.0.1:", server_->port());
  options.metrics_address = "";
  Server second(options, nullptr);
  EXPECT_EQ(second.Start().code(), absl::StatusCode::kUnavailable);
}

TEST_F(ServerTest, MetricsPortTakenIsUnavailable) {
  ServerOptions options;
  options.name = "dup";
  options.listen_address = "127.0.0.1:0";
  options.metrics_address = absl::StrCat("127.0.0.1:", server_->metrics_port());
  Server second(options, nullptr);
  EXPECT_EQ(second.Start().code(), absl::StatusCode::kUnavailable);
}

TEST_F(ServerTest, StartTwiceOrAfterShutdownFails) {
  EXPECT_EQ(server_->Start().code(), absl::StatusCode::kFailedPrecondition);
  server_->Shutdown();
  EXPECT_EQ(server_->Start().code(), absl::StatusCode::kFailedPrecondition);
}

TEST_F(ServerTest, CallWhoseClientGaveUpIsStillLoggedAndCounted) {
  EchoRequest req;
  req.set_block(true);
  EchoResponse resp;
  auto ctx = test::NewClientContext(absl::Milliseconds(50), "good-alice@acme");
  std::promise<grpc::Status> done;
  stub_->async()->Echo(ctx.get(), &req, &resp,
                       [&done](grpc::Status s) { done.set_value(std::move(s)); });
  echo_->blocked_call_started().WaitForNotification();
  EXPECT_EQ(done.get_future().get().error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  echo_->ReleaseBlockedCalls();
  // The server side ends once the released handler finishes; wait for that, then check it
  // was counted exactly once. A scrape reads one family after another, so the one that sees
  // nothing in flight may have read the counter before the call ended: read it again.
  while (Scrape().Value("gpuaas_rpc_in_flight") != 0.0) {
  }
  Exposition e = Scrape();
  EXPECT_THAT(e.Value("gpuaas_rpc_requests_total",
                      {{"service", "gpuaas.testing.v1.EchoService"}, {"method", "Echo"}}),
              Optional(1.0));
}

// One worker, room for one waiting call: with the worker blocked, of two more calls one waits
// and the other is refused at once, and the waiting one is still served.
TEST(ServerOverloadTest, RefusesCallsBeyondTheQueueAtOnce) {
  ServerOptions options{.name = "echo",
                        .listen_address = "127.0.0.1:0",
                        .metrics_address = "",
                        .worker_threads = 1,
                        .max_queued_calls = 1};
  auto server = std::make_unique<Server>(options, std::make_unique<FakeAuthenticator>());
  EchoService echo(server->handler());
  server->AddService(&echo);
  ASSERT_TRUE(server->Start().ok());
  auto stub = test::pb::EchoService::NewStub(test::LocalChannel(server->port()));

  struct Call {
    EchoRequest req;
    EchoResponse resp;
    std::unique_ptr<grpc::ClientContext> ctx =
        test::NewClientContext(kCallTimeout, "good-alice@acme");
    std::promise<grpc::Status> done;
    std::future<grpc::Status> result = done.get_future();
  };
  auto start = [&](Call& c, bool block) {
    c.req.set_message("hi");
    c.req.set_block(block);
    stub->async()->Echo(c.ctx.get(), &c.req, &c.resp,
                        [&c](grpc::Status s) { c.done.set_value(std::move(s)); });
  };
  Call busy, second, third;
  start(busy, /*block=*/true);
  echo.blocked_call_started().WaitForNotification();
  start(second, false);
  start(third, false);

  // Whichever reached the server last is refused without waiting for the worker.
  std::future<grpc::Status>* first_done = nullptr;
  while (first_done == nullptr) {
    for (Call* c : {&second, &third}) {
      if (c->result.wait_for(std::chrono::milliseconds(5)) == std::future_status::ready) {
        first_done = &c->result;
        break;
      }
    }
  }
  grpc::Status refused = first_done->get();
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(refused.error_message(), HasSubstr("overloaded"));

  echo.ReleaseBlockedCalls();
  EXPECT_TRUE(busy.result.get().ok());
  std::future<grpc::Status>& waited = first_done == &second.result ? third.result : second.result;
  EXPECT_TRUE(waited.get().ok());
  EXPECT_EQ(echo.handled(), 2);
  server->Shutdown();
}

TEST(ServerWithoutAuthenticatorTest, RefusesAuthenticatedMethods) {
  ServerOptions options;
  options.name = "public-only";
  options.listen_address = "127.0.0.1:0";
  options.metrics_address = "";
  Server server(options, nullptr);
  EchoService echo(server.handler());
  server.AddService(&echo);
  ASSERT_TRUE(server.Start().ok());
  auto stub = test::pb::EchoService::NewStub(test::LocalChannel(server.port()));
  EchoRequest req;
  EchoResponse resp;
  auto ctx = test::NewClientContext(kCallTimeout, "good-alice@acme");
  EXPECT_EQ(stub->Echo(ctx.get(), req, &resp).error_code(), grpc::StatusCode::UNAUTHENTICATED);
  server.Shutdown();
}

TEST(PeerAddressTest, StripsSchemeAndPort) {
  EXPECT_EQ(PeerAddress("ipv4:127.0.0.1:17051"), "127.0.0.1");
  EXPECT_EQ(PeerAddress("ipv6:[::1]:17051"), "::1");
  EXPECT_EQ(PeerAddress("ipv6:%5B::1%5D:17051"), "::1");
  EXPECT_EQ(PeerAddress("unix:/run/gpuaas.sock"), "/run/gpuaas.sock");
}

}  // namespace
}  // namespace gpuaas::rpc

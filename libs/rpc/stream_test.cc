// Bidirectional streams (Handler::RunBidi) through real gRPC over loopback: authentication,
// ordering, errors, half-close, cancel, shutdown, overload, metrics, and many idle streams on
// a pool of two workers.
#include "libs/rpc/stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/rpc/echo_stream_test_service.h"
#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/metrics_scrape_test_util.h"
#include "libs/rpc/server.h"

namespace gpuaas::rpc {
namespace {

using test::EchoStreamService;
using test::Exposition;
using test::FakeAuthenticator;
using test::MetricLabels;
using test::pb::EchoRequest;
using test::pb::EchoResponse;
using ::testing::Contains;
using ::testing::Each;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::Optional;
using ::testing::Property;
using ::testing::SizeIs;

// Generous: a stream's deadline only ends a test that went wrong.
constexpr absl::Duration kStreamTimeout = absl::Seconds(120);
constexpr char kToken[] = "good-alice@acme";
const MetricLabels kStreamLabels = {{"service", "gpuaas.testing.v1.EchoStreamService"},
                                    {"method", "EchoStream"}};

// The client side of one stream, on the synchronous API: a test thread drives it step by step.
struct ClientStream {
  std::unique_ptr<grpc::ClientContext> ctx;
  std::unique_ptr<grpc::ClientReaderWriter<EchoRequest, EchoResponse>> rw;

  bool Send(const std::string& message) {
    EchoRequest req;
    req.set_message(message);
    return rw->Write(req);
  }
  // Sends `message` and returns the reply's message, or "" when the stream ended instead.
  std::string Exchange(const std::string& message) {
    EchoResponse resp;
    if (!Send(message) || !rw->Read(&resp)) {
      return "";
    }
    return resp.message();
  }
  // Reads until the stream ends and returns its status.
  grpc::Status ReadToEnd() {
    EchoResponse ignored;
    while (rw->Read(&ignored)) {
    }
    return rw->Finish();
  }
  grpc::Status Close() {
    rw->WritesDone();
    return ReadToEnd();
  }
};

EchoRequest Steer(const std::string& message) {
  EchoRequest req;
  req.set_message(message);
  return req;
}

class StreamTest : public ::testing::Test {
 protected:
  void SetUp() override { StartServer({}); }

  void TearDown() override {
    if (streams_ != nullptr) {
      streams_->ReleaseBlockedMessages();
    }
    server_.reset();  // before the service, which it serves
  }

  // Workers and queue from `options`; the rest fixed.
  void StartServer(ServerOptions options) {
    options.name = "stream";
    options.listen_address = "127.0.0.1:0";
    options.metrics_address = "127.0.0.1:0";
    if (options.worker_threads == ServerOptions{}.worker_threads) {
      options.worker_threads = 2;
    }
    server_ = std::make_unique<Server>(options, std::make_unique<FakeAuthenticator>());
    streams_ = std::make_unique<EchoStreamService>(server_->handler());
    server_->AddService(streams_.get());
    absl::Status started = server_->Start();
    ASSERT_TRUE(started.ok()) << started;
    stub_ = test::pb::EchoStreamService::NewStub(test::LocalChannel(server_->port()));
  }

  ClientStream OpenStream(std::string_view token = kToken) {
    ClientStream s;
    s.ctx = test::NewClientContext(kStreamTimeout, token);
    s.rw = stub_->EchoStream(s.ctx.get());
    return s;
  }

  Exposition Scrape() const {
    absl::StatusOr<Exposition> exposition = test::ScrapeExposition(server_->metrics_port());
    EXPECT_TRUE(exposition.ok()) << exposition.status();
    return exposition.value_or(Exposition());
  }

  // Scrapes until the open-streams gauge reads `n`: a stream leaves it when its call closes,
  // which may be a moment after its client saw the status.
  // A scrape reads one family after another, so the one that first sees n streams open may
  // have read the counters before the last stream ended: the one after it has not.
  Exposition ScrapeWhenOpenStreams(double n) {
    while (Scrape().Value("gpuaas_rpc_open_streams") != n) {
    }
    return Scrape();
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<EchoStreamService> streams_;
  std::unique_ptr<test::pb::EchoStreamService::Stub> stub_;
};

TEST_F(StreamTest, MissingTokenIsUnauthenticatedBeforeOpenRuns) {
  ClientStream s = OpenStream("");
  s.Send("hello");  // may fail: the server may have ended the stream already
  grpc::Status status = s.ReadToEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(streams_->opened(), 0);
  EXPECT_EQ(streams_->messages(), 0);
}

TEST_F(StreamTest, BadTokenIsUnauthenticatedBeforeOpenRuns) {
  ClientStream s = OpenStream("forged-token");
  EXPECT_EQ(s.ReadToEnd().error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(streams_->opened(), 0);
}

TEST_F(StreamTest, OpenRefusalEndsTheStreamWithItsStatusAndNoOnEnd) {
  ClientStream s = OpenStream("good-refused@acme");
  grpc::Status status = s.ReadToEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_EQ(status.error_message(), "user refused may not stream");
  EXPECT_EQ(streams_->opened(), 1);
  server_->Shutdown();  // every OnDone has run once it returns
  EXPECT_THAT(streams_->ends(), SizeIs(0));
}

TEST_F(StreamTest, RepliesToEveryMessageInOrderOneAtATimeOnTheWorkers) {
  constexpr int kMessages = 50;
  ClientStream s = OpenStream();
  // All sent before any reply is read: the server must still take them one at a time.
  for (int i = 0; i < kMessages; ++i) {
    ASSERT_TRUE(s.Send(absl::StrCat("m", i)));
  }
  s.rw->WritesDone();
  for (int i = 0; i < kMessages; ++i) {
    EchoResponse resp;
    ASSERT_TRUE(s.rw->Read(&resp)) << "reply " << i;
    EXPECT_EQ(resp.message(), absl::StrCat("m", i));
    EXPECT_EQ(resp.principal(), "alice@acme");
  }
  grpc::Status status = s.ReadToEnd();
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(streams_->messages(), kMessages);
  EXPECT_FALSE(streams_->overlapped());
  EXPECT_LE(streams_->message_threads().size(), 2u);  // the pool's two workers
}

TEST_F(StreamTest, MessageWithoutReplyGetsNone) {
  ClientStream s = OpenStream();
  EchoRequest silent = Steer("silent");
  silent.set_no_reply(true);
  ASSERT_TRUE(s.Send("a"));
  ASSERT_TRUE(s.rw->Write(silent));
  ASSERT_TRUE(s.Send("b"));
  s.rw->WritesDone();
  std::vector<std::string> replies;
  EchoResponse resp;
  while (s.rw->Read(&resp)) {
    replies.push_back(resp.message());
  }
  EXPECT_TRUE(s.rw->Finish().ok());
  EXPECT_THAT(replies, ElementsAre("a", "b"));
  EXPECT_EQ(streams_->messages(), 3);
}

TEST_F(StreamTest, OnMessageErrorEndsTheStreamWithItsCode) {
  ClientStream s = OpenStream();
  ASSERT_EQ(s.Exchange("first"), "first");
  EchoRequest failing = Steer("second");
  failing.set_error_code(static_cast<int>(grpc::StatusCode::NOT_FOUND));
  failing.set_error_message("node n-1 not found");
  ASSERT_TRUE(s.rw->Write(failing));
  s.Send("third");  // may fail: the stream may be over already
  grpc::Status status = s.ReadToEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(status.error_message(), "node n-1 not found");
  std::vector<absl::Status> ends = streams_->WaitForEnds(1);
  ASSERT_THAT(ends, SizeIs(1));
  EXPECT_EQ(ends[0].code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(streams_->messages(), 2);  // nothing after the error
}

TEST_F(StreamTest, ExceptionInOnMessageIsInternalWithAGenericMessage) {
  ClientStream s = OpenStream();
  EchoRequest throwing = Steer("x");
  throwing.set_throw_message("pqxx: password=hunter2 connection refused");
  ASSERT_TRUE(s.rw->Write(throwing));
  grpc::Status status = s.ReadToEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INTERNAL);
  EXPECT_EQ(status.error_message(), "internal error");
  EXPECT_THAT(status.error_details(), Not(HasSubstr("hunter2")));
  std::vector<absl::Status> ends = streams_->WaitForEnds(1);
  ASSERT_THAT(ends, SizeIs(1));
  EXPECT_EQ(ends[0].code(), absl::StatusCode::kInternal);
}

TEST_F(StreamTest, ClientHalfCloseFinishesOkAndEndsTheSessionOnce) {
  ClientStream s = OpenStream();
  ASSERT_EQ(s.Exchange("one"), "one");
  ASSERT_EQ(s.Exchange("two"), "two");
  grpc::Status status = s.Close();
  EXPECT_TRUE(status.ok()) << status.error_message();
  server_->Shutdown();  // every OnDone has run once it returns
  std::vector<absl::Status> ends = streams_->ends();
  ASSERT_THAT(ends, SizeIs(1));
  EXPECT_TRUE(ends[0].ok()) << ends[0];
  EXPECT_FALSE(streams_->overlapped());
}

TEST_F(StreamTest, ClientCancelEndsTheSessionCancelled) {
  ClientStream s = OpenStream();
  ASSERT_EQ(s.Exchange("one"), "one");
  s.ctx->TryCancel();
  EXPECT_EQ(s.ReadToEnd().error_code(), grpc::StatusCode::CANCELLED);
  std::vector<absl::Status> ends = streams_->WaitForEnds(1);
  ASSERT_THAT(ends, SizeIs(1));
  EXPECT_EQ(ends[0].code(), absl::StatusCode::kCancelled) << ends[0];

  // Logged and counted once, as cancelled.
  Exposition e = ScrapeWhenOpenStreams(0);
  MetricLabels cancelled = kStreamLabels;
  cancelled.emplace("code", "CANCELLED");
  EXPECT_THAT(e.Value("gpuaas_rpc_requests_total", kStreamLabels), Optional(1.0));
  EXPECT_THAT(e.Value("gpuaas_rpc_errors_total", cancelled), Optional(1.0));
}

TEST_F(StreamTest, MetricsCountAStreamWhileOpenAndOnceAtItsEnd) {
  ClientStream s = OpenStream();
  ASSERT_EQ(s.Exchange("one"), "one");
  Exposition open = Scrape();
  EXPECT_THAT(open.Value("gpuaas_rpc_open_streams"), Optional(1.0));
  EXPECT_THAT(open.Value("gpuaas_rpc_in_flight"), Optional(0.0));  // streams are not calls
  EXPECT_EQ(open.Value("gpuaas_rpc_requests_total", kStreamLabels), std::nullopt);

  ASSERT_EQ(s.Exchange("two"), "two");
  ASSERT_TRUE(s.Close().ok());
  Exposition closed = ScrapeWhenOpenStreams(0);
  EXPECT_THAT(closed.Value("gpuaas_rpc_requests_total", kStreamLabels), Optional(1.0));
  // Stream durations are not latencies.
  EXPECT_THAT(closed.Value("gpuaas_rpc_latency_seconds_count", kStreamLabels), Optional(0.0));
  EXPECT_EQ(closed.Type("gpuaas_rpc_open_streams"), "gauge");
}

TEST_F(StreamTest, ShutdownEndsFiftyIdleStreamsUnavailable) {
  constexpr int kStreams = 50;
  std::vector<ClientStream> clients;
  for (int i = 0; i < kStreams; ++i) {
    clients.push_back(OpenStream());
    ASSERT_EQ(clients.back().Exchange(absl::StrCat("s", i)), absl::StrCat("s", i));
  }
  EXPECT_THAT(Scrape().Value("gpuaas_rpc_open_streams"), Optional(double{kStreams}));

  // Returns without waiting out the drain timeout: no stream is left for it to wait for.
  server_->Shutdown();

  for (ClientStream& c : clients) {
    grpc::Status status = c.ReadToEnd();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
    EXPECT_EQ(status.error_message(), "server shutting down");
  }
  std::vector<absl::Status> ends = streams_->ends();  // complete: Shutdown waited for OnDone
  ASSERT_THAT(ends, SizeIs(kStreams));
  EXPECT_THAT(ends, Each(Property(&absl::Status::code, absl::StatusCode::kUnavailable)));
}

TEST_F(StreamTest, ShutdownEndsABusyStreamAfterItsMessage) {
  ClientStream s = OpenStream();
  EchoRequest slow = Steer("slow");
  slow.set_block(true);
  ASSERT_TRUE(s.rw->Write(slow));
  streams_->blocked_message_started().WaitForNotification();

  std::thread shutdown([this] { server_->Shutdown(); });
  // The drain has begun once new streams are refused (or nothing listens any more).
  while (true) {
    ClientStream probe = OpenStream();
    if (!probe.Close().ok()) {
      break;
    }
  }
  streams_->ReleaseBlockedMessages();
  EchoResponse resp;
  ASSERT_TRUE(s.rw->Read(&resp));  // the busy message is still answered
  EXPECT_EQ(resp.message(), "slow");
  EXPECT_EQ(s.ReadToEnd().error_code(), grpc::StatusCode::UNAVAILABLE);
  shutdown.join();
  // (The probes that got through ended OK, or UNAVAILABLE when the shutdown caught them.)
  EXPECT_THAT(streams_->ends(),
              Contains(Property(&absl::Status::code, absl::StatusCode::kUnavailable)));
}

// Idle streams hold no worker: two workers serve 200 open streams, each answered twice while
// all stay open.
TEST_F(StreamTest, TwoHundredIdleStreamsShareTwoWorkers) {
  constexpr int kStreams = 200;
  std::vector<ClientStream> clients;
  for (int i = 0; i < kStreams; ++i) {
    clients.push_back(OpenStream());
    ASSERT_EQ(clients.back().Exchange(absl::StrCat("first-", i)), absl::StrCat("first-", i));
  }
  for (int i = 0; i < kStreams; ++i) {
    ASSERT_EQ(clients[i].Exchange(absl::StrCat("second-", i)), absl::StrCat("second-", i));
  }
  EXPECT_THAT(Scrape().Value("gpuaas_rpc_open_streams"), Optional(double{kStreams}));
  for (ClientStream& c : clients) {
    EXPECT_TRUE(c.Close().ok());
  }
  EXPECT_THAT(streams_->WaitForEnds(kStreams), SizeIs(kStreams));
  EXPECT_EQ(streams_->messages(), 2 * kStreams);
  EXPECT_LE(streams_->message_threads().size(), 2u);
}

// One worker, room for one waiting task: with the worker blocked by one stream, of two other
// streams' messages one waits and the other ends its stream UNAVAILABLE at once.
TEST_F(StreamTest, FullPoolQueueEndsTheStreamUnavailable) {
  server_.reset();
  StartServer({.worker_threads = 1, .max_queued_calls = 1});
  // One after the other: three opens at once would overflow the queue already.
  ClientStream busy, second, third;
  for (ClientStream* c : {&busy, &second, &third}) {
    *c = OpenStream();
    ASSERT_EQ(c->Exchange("hi"), "hi");
  }
  EchoRequest slow = Steer("slow");
  slow.set_block(true);
  ASSERT_TRUE(busy.rw->Write(slow));
  streams_->blocked_message_started().WaitForNotification();

  auto exchange = [](ClientStream* c) {
    return std::async(std::launch::async, [c] { return c->Exchange("queued"); });
  };
  std::future<std::string> second_reply = exchange(&second);
  std::future<std::string> third_reply = exchange(&third);
  // Whichever reached the server last is refused without waiting for the worker.
  ClientStream* refused = nullptr;
  while (refused == nullptr) {
    if (second_reply.wait_for(std::chrono::milliseconds(5)) == std::future_status::ready) {
      refused = &second;
    } else if (third_reply.wait_for(std::chrono::milliseconds(5)) == std::future_status::ready) {
      refused = &third;
    }
  }
  std::future<std::string>& waiting = refused == &second ? third_reply : second_reply;
  EXPECT_EQ((refused == &second ? second_reply : third_reply).get(), "");
  grpc::Status status = refused->ReadToEnd();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_THAT(status.error_message(), HasSubstr("overloaded"));

  streams_->ReleaseBlockedMessages();
  EchoResponse resp;
  ASSERT_TRUE(busy.rw->Read(&resp));
  EXPECT_EQ(resp.message(), "slow");
  EXPECT_EQ(waiting.get(), "queued");
  ClientStream& served = refused == &second ? third : second;
  EXPECT_TRUE(served.Close().ok());
  EXPECT_TRUE(busy.Close().ok());
}

}  // namespace
}  // namespace gpuaas::rpc

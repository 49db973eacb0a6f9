// The cap on streams that need no token (Health/Watch, reflection), through real gRPC over
// loopback: one client address holding its share is refused RESOURCE_EXHAUSTED naming the cap,
// while its token-bearing calls and Health/Check go on, and a closed stream frees its slot.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <vector>

#include "libs/rpc/echo_test_service.h"
#include "libs/rpc/held_streams_test_util.h"
#include "libs/rpc/server.h"

namespace gpuaas::rpc {
namespace {

using ::testing::HasSubstr;

constexpr absl::Duration kSettle = absl::Milliseconds(300);

class PublicStreamsTest : public ::testing::Test {
 protected:
  void StartServer(int per_client, int total) {
    server_ = std::make_unique<Server>(ServerOptions{.name = "caps",
                                                     .listen_address = "127.0.0.1:0",
                                                     .metrics_address = "",
                                                     .max_public_streams_per_client = per_client,
                                                     .max_public_streams = total},
                                       std::make_unique<test::FakeAuthenticator>());
    echo_ = std::make_unique<test::EchoService>(server_->handler());
    server_->AddService(echo_.get());
    ASSERT_TRUE(server_->Start().ok());
    channel_ = test::LocalChannel(server_->port());
  }

  void TearDown() override {
    if (server_ != nullptr) {
      server_->Shutdown();
    }
  }

  grpc::Status AuthenticatedEcho() {
    test::pb::EchoRequest req;
    req.set_message("hi");
    test::pb::EchoResponse resp;
    std::unique_ptr<grpc::ClientContext> ctx =
        test::NewClientContext(absl::Seconds(5), "good-alice@acme");
    return test::pb::EchoService::NewStub(channel_)->Echo(ctx.get(), req, &resp);
  }

  std::unique_ptr<Server> server_;
  std::unique_ptr<test::EchoService> echo_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(PublicStreamsTest, OneClientIsRefusedPastItsShareAndOtherCallsGoOn) {
  StartServer(/*per_client=*/4, /*total=*/100);
  test::HeldStreams held(channel_);
  held.Open(test::kHealthWatchMethod, 3, "");
  held.Open(test::kReflectionInfoMethod, 1);
  ASSERT_THAT(held.Ended(kSettle), ::testing::IsEmpty());

  // Over another connection too: the cap is the address's, not the connection's.
  test::HeldStreams more(test::LocalChannel(server_->port()));
  more.Open(test::kHealthWatchMethod, 2, "");
  more.Open(test::kReflectionInfoMethod, 1);
  const std::vector<grpc::Status>& refused = more.Ended(absl::Seconds(5), 3);
  ASSERT_EQ(refused.size(), 3u);
  for (const grpc::Status& s : refused) {
    EXPECT_EQ(s.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(s.error_message(), HasSubstr("at most 4 unauthenticated streams"));
    EXPECT_THAT(s.error_message(), HasSubstr("per client address"));
  }
  EXPECT_TRUE(AuthenticatedEcho().ok());
  EXPECT_EQ(test::CheckHealth(channel_, "").value_or(-1), 1);  // SERVING
}

TEST_F(PublicStreamsTest, AClosedStreamFreesItsSlot) {
  StartServer(/*per_client=*/2, /*total=*/100);
  {
    test::HeldStreams held(channel_);
    held.Open(test::kHealthWatchMethod, 2, "");
    ASSERT_THAT(held.Ended(kSettle), ::testing::IsEmpty());
  }
  // The server learns of the cancellations a moment later.
  absl::Time until = absl::Now() + absl::Seconds(5);
  while (true) {
    test::HeldStreams again(channel_);
    again.Open(test::kHealthWatchMethod, 2, "");
    if (again.Ended(kSettle).empty()) {
      break;
    }
    ASSERT_LT(absl::Now(), until) << "the closed streams' slots were never freed";
  }
}

TEST_F(PublicStreamsTest, TheServerWideCapHoldsAcrossClients) {
  StartServer(/*per_client=*/100, /*total=*/3);
  test::HeldStreams held(channel_);
  held.Open(test::kHealthWatchMethod, 4, "");
  const std::vector<grpc::Status>& refused = held.Ended(absl::Seconds(5), 1);
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0].error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(refused[0].error_message(), HasSubstr("at most 3 unauthenticated streams"));
}

}  // namespace
}  // namespace gpuaas::rpc

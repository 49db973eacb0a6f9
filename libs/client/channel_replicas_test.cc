// A channel over two replicas (channel.h "Replicas"): two in-process auth fakes behind one
// "a,b" address. Calls spread over both; a stopped replica is skipped; a call a replica answers
// UNAVAILABLE, or drops mid-call, is sent to the other only when repeating it is safe.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "libs/client/auth_client.h"
#include "libs/client/channel.h"
#include "libs/client/internal/repeatable_methods.h"
#include "libs/client/internal/replica_target.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::Contains;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr int kCalls = 20;

// One replica: counts what it served, answers `reply_`, and holds WhoAmI while `hold_` is set.
class Replica final : public authpb::AuthService::Service {
 public:
  grpc::Status WhoAmI(grpc::ServerContext*, const authpb::WhoAmIRequest*,
                      authpb::WhoAmIResponse*) override {
    ++served_;
    if (hold_ != nullptr) {
      if (!held_once_.exchange(true)) {
        held_.Notify();
      }
      hold_->WaitForNotification();
    }
    return reply_;
  }
  grpc::Status Logout(grpc::ServerContext*, const authpb::LogoutRequest*,
                      authpb::LogoutResponse*) override {
    ++served_;
    return reply_;
  }
  grpc::Status CreateApiKey(grpc::ServerContext*, const authpb::CreateApiKeyRequest*,
                            authpb::CreateApiKeyResponse*) override {
    ++served_;
    return reply_;
  }

  std::atomic<int> served_{0};
  grpc::Status reply_ = grpc::Status::OK;
  absl::Notification* hold_ = nullptr;
  absl::Notification held_;

 private:
  std::atomic<bool> held_once_{false};
};

class ChannelReplicasTest : public ::testing::Test {
 protected:
  ChannelReplicasTest() {
    for (int i = 0; i < 2; ++i) {
      grpc::ServerBuilder builder;
      builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &ports_[i]);
      builder.RegisterService(&replicas_[i]);
      servers_[i] = builder.BuildAndStart();
    }
    channel_ =
        *OpenChannel(absl::StrCat("localhost:", ports_[0], ",localhost:", ports_[1]), TlsOptions{});
    // Round robin picks among the replicas connected so far: until the second connects, the
    // first takes every call. Call until both have answered, then count afresh.
    AuthClient auth(channel_);
    for (int i = 0; i < 100 && (replicas_[0].served_ == 0 || replicas_[1].served_ == 0); ++i) {
      EXPECT_OK(auth.WhoAmI({}));
    }
    replicas_[0].served_ = 0;
    replicas_[1].served_ = 0;
  }
  ~ChannelReplicasTest() override {
    for (auto& server : servers_) {
      if (server != nullptr) {
        server->Shutdown();
      }
    }
  }

  Replica replicas_[2];
  int ports_[2] = {0, 0};
  std::unique_ptr<grpc::Server> servers_[2];
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(ChannelReplicasTest, CallsSpreadOverBothReplicas) {
  AuthClient auth(channel_);
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_OK(auth.WhoAmI({}));
  }
  EXPECT_GT(replicas_[0].served_, 0);
  EXPECT_GT(replicas_[1].served_, 0);
}

TEST_F(ChannelReplicasTest, AStoppedReplicaIsSkipped) {
  AuthClient auth(channel_);
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_OK(auth.WhoAmI({}));
  }
  servers_[0]->Shutdown();
  servers_[0].reset();
  const int served_before = replicas_[1].served_;
  for (int i = 0; i < kCalls; ++i) {
    // Logout is never repeated: it succeeds because the stopped replica is no longer picked.
    ASSERT_OK(auth.Logout({}));
  }
  EXPECT_EQ(replicas_[1].served_, served_before + kCalls);
}

TEST_F(ChannelReplicasTest, RepeatableCallsAnsweredUnavailableGoToTheOtherReplica) {
  replicas_[0].reply_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "draining");
  AuthClient auth(channel_);
  authpb::CreateApiKeyRequest keyed;
  keyed.set_request_id("key-1");
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_OK(auth.WhoAmI({}));           // a read: the channel's retry policy
    ASSERT_OK(auth.CreateApiKey(keyed));  // a keyed create: its typed client repeats it
  }
  EXPECT_GT(replicas_[0].served_, 0);
}

TEST_F(ChannelReplicasTest, CallsUnsafeToRepeatAreNotSentAgain) {
  replicas_[0].reply_ = grpc::Status(grpc::StatusCode::UNAVAILABLE, "draining");
  AuthClient auth(channel_);
  int logout_failed = 0;
  int unkeyed_create_failed = 0;
  // Separate runs: round robin alternates, so each run meets the draining replica half the time.
  for (int i = 0; i < kCalls; ++i) {
    logout_failed += absl::IsUnavailable(auth.Logout({}).status());
  }
  for (int i = 0; i < kCalls; ++i) {
    unkeyed_create_failed += absl::IsUnavailable(auth.CreateApiKey({}).status());
  }
  EXPECT_GT(logout_failed, 0);
  EXPECT_GT(unkeyed_create_failed, 0);
}

TEST_F(ChannelReplicasTest, AReadWhoseReplicaDiesMidCallIsAnsweredByTheOther) {
  AuthClient auth(channel_, absl::Seconds(10));
  const int served_by_1 = replicas_[1].served_;
  absl::Notification release;
  replicas_[0].hold_ = &release;
  // Round robin alternates: of two calls in flight, one is held by replica 0.
  absl::StatusOr<authpb::WhoAmIResponse> answers[2];
  std::thread first([&] { answers[0] = auth.WhoAmI({}); });
  std::thread second([&] { answers[1] = auth.WhoAmI({}); });
  replicas_[0].held_.WaitForNotification();
  std::thread stop([&] {
    servers_[0]->Shutdown(std::chrono::system_clock::now());  // cancels the held call
  });
  absl::SleepFor(absl::Milliseconds(100));
  release.Notify();
  stop.join();
  first.join();
  second.join();
  EXPECT_OK(answers[0]);
  EXPECT_OK(answers[1]);
  EXPECT_EQ(replicas_[1].served_, served_by_1 + 2);  // its own call, and the held one again
}

TEST(ReplicaTargetTest, ResolvesEachEntryToOneIpv4Target) {
  ASSERT_OK_AND_ASSIGN(internal::ReplicaTarget t,
                       internal::ResolveReplicaList("localhost:1,127.0.0.1:2", false));
  EXPECT_EQ(t.target, "ipv4:127.0.0.1:1,127.0.0.1:2");
  EXPECT_EQ(t.authority, "localhost:1");
}

TEST(ReplicaTargetTest, BadEntriesAreNamed) {
  EXPECT_THAT(internal::ResolveReplicaList("localhost:1,localhost", false),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("\"localhost\"")));
  EXPECT_THAT(internal::ResolveReplicaList("localhost:1,", false),
              StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(internal::ResolveReplicaList("localhost:1,no-such-host.invalid:2", false),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("resolve")));
}

TEST(ReplicaTargetTest, OverTlsTheReplicasShareAHostName) {
  EXPECT_THAT(internal::ResolveReplicaList("localhost:1,127.0.0.1:2", true),
              StatusIs(absl::StatusCode::kInvalidArgument, ::testing::HasSubstr("host name")));
  EXPECT_OK(internal::ResolveReplicaList("localhost:1,localhost:2", true));
}

TEST(RepeatableMethodsTest, ReadsAndKeyedWritesOnly) {
  const std::vector<std::string> methods = internal::RepeatableMethods();
  EXPECT_THAT(methods, Contains("gpuaas.auth.v1.AuthService/GetTenant"));
  EXPECT_THAT(methods, Contains("gpuaas.instance.v1.InstanceService/WatchInstances"));
  EXPECT_THAT(methods, Contains("gpuaas.stock.v1.StockService/ClaimStock"));
  EXPECT_THAT(methods, Contains("gpuaas.instance.v1.InstanceService/CreateInstance"));
  // They set a desired state: a repeat finds it set.
  EXPECT_THAT(methods, Contains("gpuaas.instance.v1.InstanceService/StartInstance"));
  EXPECT_THAT(methods, Contains("gpuaas.instance.v1.InstanceService/StopInstance"));
  EXPECT_THAT(methods, Contains("gpuaas.instance.v1.InstanceService/DeleteInstance"));
  // Optional keys: their typed clients repeat them only when the request carries the key.
  EXPECT_THAT(methods, Not(Contains("gpuaas.stock.v1.StockService/CreateStocks")));
  EXPECT_THAT(methods, Not(Contains("gpuaas.auth.v1.AuthService/CreateApiKey")));
  // Not idempotent at all.
  EXPECT_THAT(methods, Not(Contains("gpuaas.auth.v1.AuthService/Login")));
  EXPECT_THAT(methods, Not(Contains("gpuaas.instance.v1.AccessService/RedeemAccessCode")));
  EXPECT_THAT(methods, Not(Contains("gpuaas.stock.v1.NodeAgentService/Heartbeat")));
}

TEST(RepeatableMethodsTest, EveryNamedMethodExists) {
  EXPECT_THAT(internal::UnknownNamedMethods(), IsEmpty());
}

}  // namespace
}  // namespace gpuaas::client

// AuthClient against in-process fakes of the auth service: what reaches the server (bearer
// header, deadline), how errors come back, and how a handler's downstream call inherits the
// incoming call's deadline.
#include "libs/client/auth_client.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <optional>
#include <thread>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"
#include "libs/client/channel.h"
#include "libs/rpc/status.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::StatusIs;

// Deadlines cross the wire as timeouts (rounded up to the encoding's unit) that the server adds
// to its own receive time, so what a server sees is off by a few milliseconds either way.
constexpr absl::Duration kWireSlack = absl::Milliseconds(50);

// What the fake saw of the last call.
struct Seen {
  std::optional<std::string> authorization;  // nullopt: no header
  absl::Time deadline = absl::InfinitePast();
};

// Records every WhoAmI and answers with `reply`; blocks while `hold` is set and not notified.
class FakeAuth final : public authpb::AuthService::Service {
 public:
  grpc::Status WhoAmI(grpc::ServerContext* ctx, const authpb::WhoAmIRequest*,
                      authpb::WhoAmIResponse* resp) override {
    Seen seen;
    seen.deadline = IncomingDeadline(*ctx);
    auto it = ctx->client_metadata().find("authorization");
    if (it != ctx->client_metadata().end()) {
      seen.authorization = std::string(it->second.data(), it->second.size());
    }
    {
      absl::MutexLock lock(&mu_);
      seen_ = seen;
    }
    if (hold_ != nullptr) {
      hold_->WaitForNotification();
    }
    resp->set_user_name("alice");
    return reply_;
  }

  Seen seen() const {
    absl::MutexLock lock(&mu_);
    return seen_;
  }

  grpc::Status reply_ = grpc::Status::OK;
  absl::Notification* hold_ = nullptr;

 private:
  mutable absl::Mutex mu_;
  Seen seen_ ABSL_GUARDED_BY(mu_);
};

constexpr absl::Duration kForwarderTimeout = absl::Seconds(30);

// A service handling GetTenant as ours do (callback API, work off the gRPC thread) by calling
// WhoAmI downstream with a context derived from the incoming call.
class Forwarder final : public authpb::AuthService::CallbackService {
 public:
  explicit Forwarder(const AuthClient& downstream) : downstream_(downstream) {}
  ~Forwarder() override {
    if (worker_.joinable()) {
      worker_.join();
    }
  }

  grpc::ServerUnaryReactor* GetTenant(grpc::CallbackServerContext* ctx,
                                      const authpb::GetTenantRequest*, authpb::Tenant*) override {
    grpc::ServerUnaryReactor* reactor = ctx->DefaultReactor();
    worker_ = std::thread([this, ctx, reactor] {
      incoming_deadline_ = IncomingDeadline(*ctx);
      const CallContext call = CallContext::FromIncoming(*ctx);
      derived_deadline_ = call.Deadline(absl::Now(), kForwarderTimeout);
      absl::Status s = downstream_.WhoAmI({}, call).status();
      reactor->Finish(rpc::ToGrpcStatus(s));
    });
    return reactor;
  }

  // Written by the worker, read after the call returned.
  absl::Time incoming_deadline_;
  absl::Time derived_deadline_;  // for a downstream client whose timeout is kForwarderTimeout

 private:
  const AuthClient& downstream_;
  std::thread worker_;  // one call per test
};

std::unique_ptr<grpc::Server> Serve(grpc::Service& service, std::string& address) {
  grpc::ServerBuilder builder;
  int port = 0;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  address = "127.0.0.1:" + std::to_string(port);
  return server;
}

class AuthClientTest : public ::testing::Test {
 protected:
  AuthClientTest() {
    server_ = Serve(fake_, address_);
    channel_ = *OpenChannel(address_, TlsOptions{});
  }
  // A held handler may still be waiting after the client gave up; Shutdown waits for it.
  ~AuthClientTest() override {
    if (!release_.HasBeenNotified()) {
      release_.Notify();
    }
    server_->Shutdown();
  }

  absl::Notification release_;
  FakeAuth fake_;
  std::string address_;
  std::unique_ptr<grpc::Server> server_;
  std::shared_ptr<grpc::Channel> channel_;
};

TEST_F(AuthClientTest, SendsTheBearerHeader) {
  AuthClient auth(channel_);
  ASSERT_OK_AND_ASSIGN(authpb::WhoAmIResponse who,
                       auth.WhoAmI({}, CallContext().set_bearer_token("tok-1")));
  EXPECT_EQ(who.user_name(), "alice");
  EXPECT_EQ(fake_.seen().authorization, "Bearer tok-1");
}

TEST_F(AuthClientTest, SendsNoHeaderWithoutAToken) {
  AuthClient auth(channel_);
  EXPECT_OK(auth.WhoAmI({}));
  EXPECT_EQ(fake_.seen().authorization, std::nullopt);
}

TEST_F(AuthClientTest, EveryCallCarriesTheClientsDefaultDeadline) {
  AuthClient auth(channel_, absl::Seconds(3));
  const absl::Time before = absl::Now();
  EXPECT_OK(auth.WhoAmI({}));
  const absl::Time deadline = fake_.seen().deadline;
  EXPECT_GE(deadline, before + absl::Seconds(3) - kWireSlack);
  EXPECT_LE(deadline, absl::Now() + absl::Seconds(3) + kWireSlack);
}

TEST_F(AuthClientTest, ServerErrorsKeepCodeAndMessage) {
  fake_.reply_ = grpc::Status(grpc::StatusCode::PERMISSION_DENIED, "role too low");
  AuthClient auth(channel_);
  EXPECT_THAT(auth.WhoAmI({}), StatusIs(absl::StatusCode::kPermissionDenied, "role too low"));
}

TEST_F(AuthClientTest, SlowServerIsDeadlineExceeded) {
  fake_.hold_ = &release_;
  AuthClient auth(channel_);
  EXPECT_THAT(auth.WhoAmI({}, CallContext().set_timeout(absl::Milliseconds(100))),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST_F(AuthClientTest, UnimplementedMethodSaysSo) {
  AuthClient auth(channel_);
  EXPECT_THAT(auth.GetJwks({}), StatusIs(absl::StatusCode::kUnimplemented));
}

TEST(AuthClientUnreachableTest, IsUnavailable) {
  auto channel = OpenChannel("unix:/nonexistent/gpuaas-client-test.sock", TlsOptions{});
  ASSERT_OK(channel);
  EXPECT_THAT(AuthClient(*channel).WhoAmI({}), StatusIs(absl::StatusCode::kUnavailable));
}

// The forwarder's downstream call ends kDeadlineMargin before the incoming call does.
TEST_F(AuthClientTest, HandlerCallInheritsAShorterIncomingDeadline) {
  AuthClient downstream(channel_, kForwarderTimeout);
  Forwarder forwarder(downstream);
  std::string forwarder_address;
  std::unique_ptr<grpc::Server> server = Serve(forwarder, forwarder_address);
  AuthClient upstream(*OpenChannel(forwarder_address, TlsOptions{}));

  EXPECT_OK(upstream.GetTenant({}, CallContext().set_timeout(absl::Seconds(2))));
  const absl::Time incoming = forwarder.incoming_deadline_;
  const absl::Time outgoing = fake_.seen().deadline;
  ASSERT_NE(incoming, absl::InfiniteFuture());
  // gRPC converts its monotonic deadline to the system clock anew on each read: allow 1 ms.
  EXPECT_LT(absl::AbsDuration(forwarder.derived_deadline_ - (incoming - kDeadlineMargin)),
            absl::Milliseconds(1));
  // What the downstream server sees is that deadline after a trip over the wire.
  EXPECT_LE(outgoing, incoming + kWireSlack);
  EXPECT_GE(outgoing, incoming - kDeadlineMargin - kWireSlack);
  server->Shutdown();
}

TEST_F(AuthClientTest, HandlerCallWithoutIncomingDeadlineGetsItsOwnTimeout) {
  AuthClient downstream(channel_, absl::Seconds(3));
  Forwarder forwarder(downstream);
  std::string forwarder_address;
  std::unique_ptr<grpc::Server> server = Serve(forwarder, forwarder_address);
  // A raw stub: the one way to make a call without a deadline, as a foreign client might.
  auto stub = authpb::AuthService::NewStub(*OpenChannel(forwarder_address, TlsOptions{}));
  grpc::ClientContext no_deadline;
  authpb::Tenant tenant;
  const absl::Time before = absl::Now();
  ASSERT_TRUE(stub->GetTenant(&no_deadline, {}, &tenant).ok());
  EXPECT_EQ(forwarder.incoming_deadline_, absl::InfiniteFuture());
  const absl::Time outgoing = fake_.seen().deadline;
  EXPECT_GE(outgoing, before + absl::Seconds(3) - kWireSlack);
  EXPECT_LE(outgoing, absl::Now() + absl::Seconds(3) + kWireSlack);
  server->Shutdown();
}

TEST_F(AuthClientTest, HandlerCallFailsWhenTheIncomingDeadlineHasNoRoomLeft) {
  fake_.reply_ = grpc::Status(grpc::StatusCode::INTERNAL, "must not be reached");
  AuthClient downstream(channel_);
  Forwarder forwarder(downstream);
  std::string forwarder_address;
  std::unique_ptr<grpc::Server> server = Serve(forwarder, forwarder_address);
  AuthClient upstream(*OpenChannel(forwarder_address, TlsOptions{}));
  EXPECT_THAT(upstream.GetTenant({}, CallContext().set_timeout(kDeadlineMargin / 2)),
              StatusIs(absl::StatusCode::kDeadlineExceeded));
  server->Shutdown();
}

}  // namespace
}  // namespace gpuaas::client

#include "bench/loadgen/methods.h"

#include <gtest/gtest.h>

#include "gpuaas/auth/v1/auth.grpc.pb.h"

namespace gpuaas::bench {
namespace {

MethodArgs Args(std::string token, std::string user = "") {
  MethodArgs a;
  a.token = std::move(token);
  a.user = std::move(user);
  return a;
}

std::shared_ptr<grpc::Channel> Unused() {
  return grpc::CreateChannel("127.0.0.1:1", grpc::InsecureChannelCredentials());
}

TEST(MethodsTest, TableHasTheMethods) {
  EXPECT_EQ(MethodNames(),
            "WhoAmI|GetTenant|ListTenants|Login|GetStorage|GetInstance|CreateInstance");
  EXPECT_EQ(FindMethod("CreateInstance")->server, client::Service::kInstance);
  EXPECT_EQ(FindMethod("GetStorage")->server, client::Service::kStorage);
  ASSERT_NE(FindMethod("WhoAmI"), nullptr);
  EXPECT_TRUE(FindMethod("WhoAmI")->needs_token);
  EXPECT_FALSE(FindMethod("Login")->needs_token);
  EXPECT_EQ(FindMethod("whoami"), nullptr);
}

TEST(MethodsTest, MissingArgumentsAreInvalid) {
  EXPECT_EQ(FindMethod("GetTenant")->make(Unused(), {}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FindMethod("Login")->make(Unused(), Args("", "a")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FindMethod("GetStorage")->make(Unused(), Args("t")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FindMethod("GetInstance")->make(Unused(), Args("t")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FindMethod("CreateInstance")->make(Unused(), Args("t")).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(FindMethod("WhoAmI")->make(Unused(), Args("t")).ok());
}

TEST(MethodsTest, UnreachableServerCompletesWithUnavailable) {
  auto invoker = FindMethod("WhoAmI")->make(Unused(), Args("t"));
  ASSERT_TRUE(invoker.ok());
  absl::Mutex mu;
  std::optional<grpc::Status> result;
  (*invoker)([&](grpc::Status s) {
    absl::MutexLock lock(&mu);
    result = s;
  });
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](std::optional<grpc::Status>* r) { return r->has_value(); }, &result));
  EXPECT_EQ(result->error_code(), grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace gpuaas::bench

namespace gpuaas::bench {
namespace {

// Answers WhoAmI only for the expected bearer token and with a deadline, so the test sees both
// arrive.
class FakeAuth final : public auth::v1::AuthService::Service {
 public:
  grpc::Status WhoAmI(grpc::ServerContext* ctx, const auth::v1::WhoAmIRequest*,
                      auth::v1::WhoAmIResponse* resp) override {
    if (ctx->deadline() == std::chrono::system_clock::time_point::max()) {
      return {grpc::StatusCode::FAILED_PRECONDITION, "no deadline"};
    }
    auto it = ctx->client_metadata().find("authorization");
    if (it == ctx->client_metadata().end() ||
        std::string(it->second.data(), it->second.size()) != "Bearer t") {
      return {grpc::StatusCode::UNAUTHENTICATED, "bad token"};
    }
    resp->set_user_name("alice");
    return grpc::Status::OK;
  }
};

TEST(MethodsTest, DrivesARealServerThroughTheOpenLoop) {
  FakeAuth fake;
  grpc::ServerBuilder b;
  int port = 0;
  b.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  b.RegisterService(&fake);
  std::unique_ptr<grpc::Server> server = b.BuildAndStart();
  auto channel =
      grpc::CreateChannel("127.0.0.1:" + std::to_string(port), grpc::InsecureChannelCredentials());
  OpenLoopOptions o;
  o.rate = 500;
  o.warmup = absl::Milliseconds(20);
  o.duration = absl::Milliseconds(200);
  for (auto [token, want_ok] : {std::pair{"t", true}, std::pair{"wrong", false}}) {
    auto invoker = FindMethod("WhoAmI")->make(channel, Args(token));
    ASSERT_TRUE(invoker.ok());
    LatencyRecorder rec;
    OpenLoopResult r = RunOpenLoop(*invoker, o, rec);
    LatencySummary s = rec.Summarize();
    EXPECT_EQ(r.scheduled, 100);
    EXPECT_EQ(s.completed, 100);
    EXPECT_EQ(s.ok, want_ok ? 100 : 0);
    EXPECT_EQ(s.errors.count("UNAUTHENTICATED"), want_ok ? 0u : 1u);
  }
  server->Shutdown();
}

}  // namespace
}  // namespace gpuaas::bench

#include "bench/loadgen/methods.h"

#include <gtest/gtest.h>

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

TEST(MethodsTest, TableHasTheAuthMethods) {
  EXPECT_EQ(MethodNames(), "WhoAmI|GetTenant|ListTenants|Login");
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
  EXPECT_TRUE(FindMethod("WhoAmI")->make(Unused(), Args("t")).ok());
}

TEST(MethodsTest, UnreachableServerCompletesWithUnavailable) {
  auto invoker = FindMethod("WhoAmI")->make(Unused(), Args("t"));
  ASSERT_TRUE(invoker.ok());
  grpc::ClientContext ctx;
  ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  absl::Mutex mu;
  std::optional<grpc::Status> result;
  (*invoker)(&ctx, [&](grpc::Status s) {
    absl::MutexLock lock(&mu);
    result = s;
  });
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(+[](std::optional<grpc::Status>* r) { return r->has_value(); }, &result));
  EXPECT_EQ(result->error_code(), grpc::StatusCode::UNAVAILABLE);
}

}  // namespace
}  // namespace gpuaas::bench

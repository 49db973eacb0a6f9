// Calls started without waiting (PendingCall, through StockClient::StartGetSpec) against an
// in-process stock service that holds GetSpec until told: several are in flight at once, each
// answers its own request, and a call dropped unanswered is cancelled at the server at once.
#include "libs/client/pending_call.h"

#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <optional>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "libs/client/channel.h"
#include "libs/client/stock_client.h"
#include "libs/testing/status_matchers.h"

namespace gpuaas::client {
namespace {

using ::gpuaas::testing::StatusIs;

// GetSpec answers a spec named as asked once `Release` was called, or when its caller goes
// away; counts the calls waiting and the ones that ended cancelled.
class HeldStock final : public stockpb::StockService::Service {
 public:
  grpc::Status GetSpec(grpc::ServerContext* ctx, const stockpb::GetSpecRequest* req,
                       stockpb::Spec* resp) override {
    absl::MutexLock lock(&mu_);
    ++waiting_;
    // Woken by Release; a cancellation is noticed within the timeout's period.
    const auto go = [&] { return released_; };
    while (!mu_.AwaitWithTimeout(absl::Condition(&go), absl::Milliseconds(10)) &&
           !ctx->IsCancelled()) {
    }
    --waiting_;
    if (!released_) {
      ++cancelled_;
      return grpc::Status::CANCELLED;
    }
    resp->set_spec_name(req->spec_name());
    return grpc::Status::OK;
  }

  void Release() {
    absl::MutexLock lock(&mu_);
    released_ = true;
  }
  // Waits (5 s at most) until `n` calls are waiting at once.
  bool AwaitWaiting(int n) {
    absl::MutexLock lock(&mu_);
    const auto reached = [&] { return waiting_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(5));
  }
  // Waits (5 s at most) until `n` calls ended cancelled.
  bool AwaitCancelled(int n) {
    absl::MutexLock lock(&mu_);
    const auto reached = [&] { return cancelled_ >= n; };
    return mu_.AwaitWithTimeout(absl::Condition(&reached), absl::Seconds(5));
  }

 private:
  absl::Mutex mu_;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
  int waiting_ ABSL_GUARDED_BY(mu_) = 0;
  int cancelled_ ABSL_GUARDED_BY(mu_) = 0;
};

class PendingCallTest : public ::testing::Test {
 protected:
  PendingCallTest() {
    grpc::ServerBuilder builder;
    int port = 0;
    builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
    builder.RegisterService(&fake_);
    server_ = builder.BuildAndStart();
    stock_.emplace(*OpenChannel("127.0.0.1:" + std::to_string(port), TlsOptions{}),
                   absl::Seconds(10));
  }
  ~PendingCallTest() override {
    fake_.Release();
    server_->Shutdown();
  }

  static stockpb::GetSpecRequest Named(const std::string& name) {
    stockpb::GetSpecRequest req;
    req.set_spec_name(name);
    return req;
  }

  HeldStock fake_;
  std::unique_ptr<grpc::Server> server_;
  std::optional<StockClient> stock_;
};

TEST_F(PendingCallTest, CallsAreInFlightTogetherAndEachGetsItsOwnAnswer) {
  PendingCall<stockpb::Spec> a = stock_->StartGetSpec(Named("a100.1x"));
  PendingCall<stockpb::Spec> b = stock_->StartGetSpec(Named("h100.8x"));
  // Both wait at the server at once: neither was held back behind the other.
  ASSERT_TRUE(fake_.AwaitWaiting(2));
  fake_.Release();
  absl::StatusOr<stockpb::Spec> b_answer = b.Wait();
  absl::StatusOr<stockpb::Spec> a_answer = a.Wait();
  ASSERT_OK(a_answer);
  ASSERT_OK(b_answer);
  EXPECT_EQ(a_answer->spec_name(), "a100.1x");
  EXPECT_EQ(b_answer->spec_name(), "h100.8x");
}

TEST_F(PendingCallTest, ACallDroppedUnansweredIsCancelledAtOnce) {
  const absl::Time before = absl::Now();
  {
    PendingCall<stockpb::Spec> dropped = stock_->StartGetSpec(Named("a100.1x"));
    ASSERT_TRUE(fake_.AwaitWaiting(1));
  }
  EXPECT_LT(absl::Now() - before, absl::Seconds(5)) << "the drop waited for the deadline";
  EXPECT_TRUE(fake_.AwaitCancelled(1)) << "the server never saw the cancellation";
}

TEST_F(PendingCallTest, ACallPastItsDeadlineIsDeadlineExceeded) {
  PendingCall<stockpb::Spec> late =
      stock_->StartGetSpec(Named("a100.1x"), CallContext().set_timeout(absl::Milliseconds(100)));
  EXPECT_THAT(late.Wait(), StatusIs(absl::StatusCode::kDeadlineExceeded));
}

TEST_F(PendingCallTest, AMovedCallIsWaitedForByItsNewOwner) {
  std::optional<PendingCall<stockpb::Spec>> moved;
  {
    PendingCall<stockpb::Spec> first = stock_->StartGetSpec(Named("a100.1x"));
    moved.emplace(std::move(first));
  }  // the moved-from call cancels nothing
  fake_.Release();
  absl::StatusOr<stockpb::Spec> answer = moved->Wait();
  ASSERT_OK(answer);
  EXPECT_EQ(answer->spec_name(), "a100.1x");
}

}  // namespace
}  // namespace gpuaas::client

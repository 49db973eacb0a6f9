// Test-only: EchoStreamService on Handler::RunBidi, and what the stream tests observe of it:
// sessions opened, how each ended (OnEnd), which threads ran OnMessage, and whether OnMessage
// ever overlapped itself or OnEnd within one session.
#pragma once

#include <grpcpp/grpcpp.h>

#include <atomic>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "gpuaas/testing/v1/echo.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "libs/rpc/stream.h"

namespace gpuaas::rpc::test {

namespace pb = ::gpuaas::testing::v1;

class EchoStreamService final : public pb::EchoStreamService::CallbackService {
 public:
  using Session = StreamSession<pb::EchoRequest, pb::EchoResponse>;

  explicit EchoStreamService(Handler& handler) : handler_(handler) {}

  grpc::ServerBidiReactor<pb::EchoRequest, pb::EchoResponse>* EchoStream(
      grpc::CallbackServerContext* ctx) override {
    return handler_.RunBidi<pb::EchoRequest, pb::EchoResponse>(
        ctx, [this](const authz::Principal& p) -> absl::StatusOr<std::unique_ptr<Session>> {
          ++opened_;
          if (p.user_id == "refused") {
            return absl::PermissionDeniedError("user refused may not stream");
          }
          return std::make_unique<EchoSession>(*this, PrincipalLabel(p));
        });
  }

  // Times `open` ran (after a valid token).
  int opened() const { return opened_; }
  // Times OnMessage ran.
  int messages() const { return messages_; }
  // OnMessage ran while the same session's OnMessage or OnEnd was running, or OnEnd twice.
  bool overlapped() const { return overlapped_; }

  std::set<std::thread::id> message_threads() const {
    absl::MutexLock lock(&mu_);
    return message_threads_;
  }

  // The statuses OnEnd heard so far, in order.
  std::vector<absl::Status> ends() const {
    absl::MutexLock lock(&mu_);
    return ends_;
  }

  // Waits until at least `n` sessions ended (at most `timeout`, so that a bug fails the test
  // instead of hanging it) and returns ends().
  std::vector<absl::Status> WaitForEnds(size_t n, absl::Duration timeout = absl::Seconds(60)) {
    absl::MutexLock lock(&mu_);
    auto enough = [this, n]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return ends_.size() >= n; };
    mu_.AwaitWithTimeout(absl::Condition(&enough), timeout);
    return ends_;
  }

  // Notified when a message with `block` set is inside OnMessage.
  absl::Notification& blocked_message_started() { return blocked_started_; }
  void ReleaseBlockedMessages() {
    if (!release_.HasBeenNotified()) {
      release_.Notify();
    }
  }

 private:
  class EchoSession final : public Session {
   public:
    EchoSession(EchoStreamService& service, std::string principal)
        : service_(service), principal_(std::move(principal)) {}

    absl::StatusOr<std::optional<pb::EchoResponse>> OnMessage(const pb::EchoRequest& req) override {
      Busy busy(*this);
      service_.RecordMessage();
      if (req.block()) {
        service_.blocked_started_.Notify();
        service_.release_.WaitForNotification();
      }
      if (!req.throw_message().empty()) {
        throw std::runtime_error(req.throw_message());
      }
      if (req.error_code() != 0) {
        return absl::Status(static_cast<absl::StatusCode>(req.error_code()), req.error_message());
      }
      if (req.no_reply()) {
        return std::nullopt;
      }
      pb::EchoResponse resp;
      resp.set_message(req.message());
      resp.set_principal(principal_);
      return resp;
    }

    void OnEnd(const absl::Status& status) override {
      Busy busy(*this);
      if (ended_) {
        service_.overlapped_ = true;
      }
      ended_ = true;
      service_.RecordEnd(status);
    }

   private:
    // Marks the session busy for one call, and notes an overlap.
    class Busy {
     public:
      explicit Busy(EchoSession& s) : s_(s) {
        if (s_.busy_.exchange(true)) {
          s_.service_.overlapped_ = true;
        }
      }
      ~Busy() { s_.busy_ = false; }

     private:
      EchoSession& s_;
    };

    EchoStreamService& service_;
    const std::string principal_;
    std::atomic<bool> busy_{false};
    bool ended_ = false;
  };

  void RecordMessage() {
    ++messages_;
    absl::MutexLock lock(&mu_);
    message_threads_.insert(std::this_thread::get_id());
  }

  void RecordEnd(const absl::Status& status) {
    absl::MutexLock lock(&mu_);
    ends_.push_back(status);
  }

  Handler& handler_;
  std::atomic<int> opened_{0};
  std::atomic<int> messages_{0};
  std::atomic<bool> overlapped_{false};
  mutable absl::Mutex mu_;
  std::set<std::thread::id> message_threads_ ABSL_GUARDED_BY(mu_);
  std::vector<absl::Status> ends_ ABSL_GUARDED_BY(mu_);
  absl::Notification blocked_started_;
  absl::Notification release_;
};

}  // namespace gpuaas::rpc::test

#include "libs/rpc/internal/stream_call.h"

#include <chrono>
#include <exception>
#include <utility>

#include "libs/common/logging.h"
#include "libs/rpc/status.h"
#include "libs/rpc/stream.h"

namespace gpuaas::rpc::internal {

std::shared_ptr<StreamCall> StartStream(Handler& handler, grpc::CallbackServerContext* ctx,
                                        TypedStream& typed) {
  auto call = std::make_shared<StreamCall>(handler, *ctx, typed);
  call->Start();
  return call;
}

void OnStreamReadDone(StreamCall& call, bool ok) { call.ReadDone(ok); }

void OnStreamWriteDone(StreamCall& call, bool ok) { call.WriteDone(ok); }

void OnStreamDone(StreamCall& call) { call.Done(); }

StreamCall::StreamCall(Handler& handler, grpc::CallbackServerContext& ctx, TypedStream& typed)
    : handler_(handler), ctx_(ctx), typed_(typed) {}

void StreamCall::Start() {
  absl::Status admitted = handler_.streams_->Add(shared_from_this());
  if (!admitted.ok()) {
    FinishNow(admitted);
    return;
  }
  authorization_ = Handler::AuthorizationHeader(ctx_);
  Submit(&StreamCall::Open);
}

void StreamCall::Open() {
  absl::Status status = handler_.Guarded(ctx_, [this]() -> absl::Status {
    absl::StatusOr<authz::Principal> principal = handler_.Authenticate(ctx_, authorization_);
    authorization_.clear();
    if (!principal.ok()) {
      return principal.status();
    }
    return typed_.OpenSession(*principal);
  });
  AfterWork(status, /*reply=*/false);
}

void StreamCall::HandleMessage() {
  bool reply = false;
  absl::Status status = handler_.Guarded(ctx_, [this, &reply]() -> absl::Status {
    absl::StatusOr<bool> handled = typed_.HandleMessage();
    if (!handled.ok()) {
      return handled.status();
    }
    reply = *handled;
    return absl::OkStatus();
  });
  AfterWork(status, reply);
}

void StreamCall::AfterWork(const absl::Status& status, bool reply) {
  if (!status.ok()) {
    FinishNow(status);
    return;
  }
  if (reply) {
    {
      absl::MutexLock lock(&mu_);
      phase_ = Phase::kWriting;
    }
    // End only records its request while a write is pending, so the stream cannot finish
    // (and the reactor cannot go) before this write has started.
    typed_.WriteReply();
    return;
  }
  ReadNext();
}

void StreamCall::Submit(void (StreamCall::*work)()) {
  // The task's reference keeps this alive however the stream ends meanwhile.
  if (!handler_.pool_.TrySubmit([self = shared_from_this(), work] { ((*self).*work)(); })) {
    FinishNow(Handler::OverloadedError());
  }
}

void StreamCall::ReadNext() {
  std::shared_ptr<StreamCall> self = shared_from_this();  // the read may complete inline
  uint64_t read = 0;
  std::optional<absl::Status> finish;
  {
    absl::MutexLock lock(&mu_);
    if (end_requested_.has_value()) {
      if (!ClaimFinish(*end_requested_)) {
        return;
      }
      finish = *end_requested_;
    } else {
      phase_ = Phase::kReading;
      read = ++reads_;
      read_started_ = false;
    }
  }
  if (finish.has_value()) {
    typed_.FinishWith(ToGrpcStatus(*finish));
    return;
  }
  typed_.ReadNext();
  // If End came while the read was being started, it left the finish to us.
  {
    absl::MutexLock lock(&mu_);
    if (phase_ != Phase::kReading || reads_ != read) {
      return;  // the read already completed
    }
    read_started_ = true;
    if (end_requested_.has_value() && ClaimFinish(*end_requested_)) {
      finish = *end_requested_;
    }
  }
  if (finish.has_value()) {
    typed_.FinishWith(ToGrpcStatus(*finish));
  }
}

void StreamCall::ReadDone(bool ok) {
  std::shared_ptr<StreamCall> self = shared_from_this();
  absl::Status finish;
  {
    absl::MutexLock lock(&mu_);
    if (phase_ == Phase::kFinished) {
      return;  // End finished the stream while this read was pending
    }
    if (ok) {
      phase_ = Phase::kWorking;
    } else {
      // The client half-closed, or went away (EndStatus tells them apart at the end).
      finish = end_requested_.value_or(absl::OkStatus());
      if (!ClaimFinish(finish)) {
        return;
      }
    }
  }
  if (ok) {
    Submit(&StreamCall::HandleMessage);
  } else {
    typed_.FinishWith(ToGrpcStatus(finish));
  }
}

void StreamCall::WriteDone(bool ok) {
  std::shared_ptr<StreamCall> self = shared_from_this();
  if (!ok) {
    FinishNow(absl::CancelledError("reply not delivered: the client went away"));
    return;
  }
  ReadNext();
}

void StreamCall::End(const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (phase_ == Phase::kFinished || end_requested_.has_value()) {
      return;
    }
    end_requested_ = status;
    // Any other step hands over to the next one, which looks at end_requested_.
    if (phase_ != Phase::kReading || !read_started_ || !ClaimFinish(status)) {
      return;
    }
  }
  // The pending read keeps the call, and so the reactor, alive until this Finish is done.
  typed_.FinishWith(ToGrpcStatus(status));
}

void StreamCall::FinishNow(const absl::Status& status) {
  {
    absl::MutexLock lock(&mu_);
    if (!ClaimFinish(status)) {
      return;
    }
  }
  typed_.FinishWith(ToGrpcStatus(status));
}

bool StreamCall::ClaimFinish(const absl::Status& status) {
  if (phase_ == Phase::kFinished) {
    return false;
  }
  phase_ = Phase::kFinished;
  finished_with_ = status;
  return true;
}

void StreamCall::Done() {
  absl::Status status = EndStatus();
  try {
    typed_.EndSession(status);
  } catch (const std::exception& e) {
    Logger("rpc")->error("stream OnEnd threw: {}", e.what());
  } catch (...) {
    Logger("rpc")->error("stream OnEnd threw a non-std exception");
  }
  handler_.streams_->Remove(this);
}

absl::Status StreamCall::EndStatus() {
  absl::Status sent;
  {
    absl::MutexLock lock(&mu_);
    sent = finished_with_;
  }
  // A non-OK status is the server's own decision and says more than "cancelled" does.
  if (!sent.ok() || !ctx_.IsCancelled()) {
    return sent;
  }
  if (ctx_.deadline() <= std::chrono::system_clock::now()) {
    return absl::DeadlineExceededError("deadline exceeded");
  }
  return absl::CancelledError("stream cancelled by the client");
}

absl::Status OpenStreams::Add(const std::shared_ptr<EndableStream>& stream) {
  absl::MutexLock lock(&mu_);
  if (!closed_.ok()) {
    return closed_;
  }
  streams_.emplace(stream.get(), stream);
  return absl::OkStatus();
}

void OpenStreams::Remove(const EndableStream* stream) {
  absl::MutexLock lock(&mu_);
  streams_.erase(stream);
}

std::vector<std::shared_ptr<EndableStream>> OpenStreams::Close(const absl::Status& status) {
  absl::MutexLock lock(&mu_);
  closed_ = status;
  std::vector<std::shared_ptr<EndableStream>> open;
  open.reserve(streams_.size());
  for (const auto& [key, stream] : streams_) {
    if (std::shared_ptr<EndableStream> alive = stream.lock(); alive != nullptr) {
      open.push_back(std::move(alive));
    }
  }
  return open;
}

}  // namespace gpuaas::rpc::internal

// Test-only: many streams of one method opened and held, as a client that never lets go does,
// through the generic async API (no generated stubs). Each stream sends `request` (if any) and
// half-closes, then waits for its status; a stream the server refuses ends at once.
#pragma once

#include <grpcpp/generic/generic_stub.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace gpuaas::rpc::test {

inline constexpr char kHealthWatchMethod[] = "/grpc.health.v1.Health/Watch";
inline constexpr char kReflectionInfoMethod[] =
    "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo";

class HeldStreams final {
 public:
  explicit HeldStreams(std::shared_ptr<grpc::Channel> channel) : stub_(std::move(channel)) {}
  HeldStreams(const HeldStreams&) = delete;
  HeldStreams& operator=(const HeldStreams&) = delete;

  ~HeldStreams() {
    for (std::unique_ptr<Stream>& s : streams_) {
      s->ctx.TryCancel();
    }
    while (pending_ > 0 && Next(absl::Seconds(10))) {
    }
    cq_.Shutdown();
    void* tag;
    bool ok;
    while (cq_.Next(&tag, &ok)) {
    }
  }

  // Opens `n` streams of `method`; `request` (when set) is written on each before the
  // half-close (Health/Watch reads one request; reflection's handler starts without one).
  void Open(const std::string& method, int n, std::optional<std::string> request = std::nullopt) {
    for (int i = 0; i < n; ++i) {
      auto s = std::make_unique<Stream>();
      const uintptr_t index = streams_.size();
      // The start and the write share one batch of operations: a request goes out with the
      // call's metadata, so only one of them completes.
      s->ctx.set_initial_metadata_corked(request.has_value());
      s->call = stub_.PrepareCall(&s->ctx, method, &cq_);
      s->call->StartCall(Tag(index, kStart));
      if (request.has_value()) {
        grpc::Slice slice(*request);
        s->call->WriteLast(grpc::ByteBuffer(&slice, 1), grpc::WriteOptions(), Tag(index, kWrite));
      }
      ++pending_;
      s->call->Finish(&s->status, Tag(index, kFinish));
      ++pending_;
      streams_.push_back(std::move(s));
    }
  }

  // Streams ended so far, after taking completions for up to `wait` or until `enough` ended.
  const std::vector<grpc::Status>& Ended(absl::Duration wait, size_t enough = SIZE_MAX) {
    absl::Time until = absl::Now() + wait;
    while (pending_ > 0 && ended_.size() < enough && Next(until - absl::Now())) {
    }
    return ended_;
  }

  int opened() const { return static_cast<int>(streams_.size()); }

 private:
  enum Op : uintptr_t { kStart = 0, kWrite = 1, kFinish = 2 };
  struct Stream {
    grpc::ClientContext ctx;
    std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call;
    grpc::Status status;
  };

  static void* Tag(uintptr_t index, Op op) { return reinterpret_cast<void*>(index * 4 + op + 4); }

  // One completion, or false when none came within `wait`.
  bool Next(absl::Duration wait) {
    void* tag;
    bool ok;
    auto deadline = std::chrono::system_clock::now() +
                    absl::ToChronoMilliseconds(std::max(wait, absl::ZeroDuration()));
    if (cq_.AsyncNext(&tag, &ok, deadline) != grpc::CompletionQueue::GOT_EVENT) {
      return false;
    }
    --pending_;
    uintptr_t value = reinterpret_cast<uintptr_t>(tag) - 4;
    if (value % 4 == kFinish) {
      ended_.push_back(streams_[value / 4]->status);
    }
    return true;
  }

  grpc::GenericStub stub_;
  grpc::CompletionQueue cq_;
  std::vector<std::unique_ptr<Stream>> streams_;
  std::vector<grpc::Status> ended_;
  int pending_ = 0;
};

}  // namespace gpuaas::rpc::test

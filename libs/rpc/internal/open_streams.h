// The open streams of one Handler (bidirectional and server-streaming alike), so that
// Server::Shutdown can end them all instead of waiting for streams that stay open for hours.
#pragma once

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"

namespace gpuaas::rpc::internal {

// A stream the registry can end.
class EndableStream {
 public:
  // Ends the stream with `status` as soon as it may (at once, or after its current step).
  // Later calls are ignored.
  virtual void End(const absl::Status& status) = 0;

 protected:
  ~EndableStream() = default;
};

class OpenStreams final {
 public:
  // Registers `stream`, or returns the status it must end with at once (after Close).
  absl::Status Add(const std::shared_ptr<EndableStream>& stream);
  void Remove(const EndableStream* stream);
  // Refuses new streams with `status` from now on and returns the open ones.
  std::vector<std::shared_ptr<EndableStream>> Close(const absl::Status& status);

 private:
  absl::Mutex mu_;
  absl::Status closed_ ABSL_GUARDED_BY(mu_);  // OK while open
  absl::flat_hash_map<const EndableStream*, std::weak_ptr<EndableStream>> streams_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::rpc::internal

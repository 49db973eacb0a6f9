// The minimum data rate a request body must keep (as Apache's mod_reqtimeout body=...,MinRate=...
// does): after a grace, each byte buys 1/min_rate seconds more, so the body as a whole must
// arrive at least that fast on average. A slow link uploading a large part keeps going (it earns
// time as it sends); a client that trickles a byte now and then, to hold a worker for hours, runs
// out of time. Only the time spent waiting for the client counts, not the handler's own work
// (hashing, fsync) between reads.
#pragma once

#include <algorithm>
#include <cstdint>

#include "absl/time/time.h"

namespace gpuaas::http {

class BodyPace final {
 public:
  // min_bytes_per_second 0: no rate, only `idle` bounds each wait.
  BodyPace(absl::Duration grace, int64_t min_bytes_per_second, absl::Duration idle)
      : grace_(grace), rate_(min_bytes_per_second), idle_(idle) {}

  // The longest the next read may wait for the client; zero or less: the body is too slow.
  absl::Duration NextWait() const {
    if (rate_ <= 0) {
      return idle_;
    }
    const absl::Duration earned =
        grace_ + absl::Seconds(static_cast<double>(bytes_) / static_cast<double>(rate_));
    return std::min(idle_, earned - waited_);
  }
  bool TooSlow() const { return NextWait() <= absl::ZeroDuration(); }

  // A read that waited `waited` and got `bytes`.
  void Record(absl::Duration waited, uint64_t bytes) {
    waited_ += waited;
    bytes_ += bytes;
  }

  uint64_t bytes() const { return bytes_; }
  absl::Duration waited() const { return waited_; }

 private:
  absl::Duration grace_;
  int64_t rate_;
  absl::Duration idle_;
  absl::Duration waited_;
  uint64_t bytes_ = 0;
};

}  // namespace gpuaas::http

// Backoff: how long to wait before the next attempt after a failure. The wait doubles from
// `initial` up to `max`; with jitter each wait is drawn at random from the top `jitter` share of
// its ceiling (0.5, the default, is "equal jitter": between half the ceiling and the ceiling),
// so clients that failed together do not come back in lockstep. Reset() after a success.
#pragma once

#include <cstdint>
#include <random>

#include "absl/time/time.h"

namespace gpuaas {

class Backoff final {
 public:
  struct Options {
    absl::Duration initial = absl::Milliseconds(200);
    absl::Duration max = absl::Seconds(5);
    // The share of each ceiling that is random, in [0, 1]; 0 waits exactly the ceiling.
    double jitter = 0.5;
  };

  // Seeded from a cheap per-thread generator: constructing one per call is fine.
  explicit Backoff(Options options);
  // `seed` makes the jitter repeatable in tests.
  Backoff(Options options, uint64_t seed);

  // The wait before the next attempt; each call doubles the next ceiling, up to max. Never
  // blocks (the caller sleeps, typically with StopSignal::WaitFor).
  absl::Duration Next();
  // Back to `initial`, after a success.
  void Reset() { attempt_ = 0; }

  // The ceiling of the wait before retry number `attempt` (0 = the first): `initial` doubled
  // `attempt` times, capped at `max`. For callers that keep the attempt count elsewhere (a
  // table row) and want no jitter.
  static absl::Duration Ceiling(const Options& options, int64_t attempt);

 private:
  Options options_;
  std::mt19937_64 rng_;
  int64_t attempt_ = 0;
};

}  // namespace gpuaas

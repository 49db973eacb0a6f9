// How long to wait before the next attempt after a failure: doubling from `initial` up to `max`,
// each wait drawn at random from its upper half ("equal jitter"), so a fleet of agents that lost
// the stock service together does not come back in lockstep.
#pragma once

#include <cstdint>
#include <random>

#include "absl/time/time.h"

namespace gpuaas::agent {

class Backoff final {
 public:
  struct Options {
    absl::Duration initial = absl::Milliseconds(200);
    absl::Duration max = absl::Seconds(5);
  };

  // `seed` makes the jitter repeatable in tests.
  explicit Backoff(Options options, uint64_t seed = std::random_device{}());

  // The wait before the next attempt; each call doubles the next one, up to max. Never blocks.
  absl::Duration Next();
  // Back to `initial`, after a success.
  void Reset() { attempt_ = 0; }

 private:
  Options options_;
  std::mt19937_64 rng_;
  int attempt_ = 0;
};

}  // namespace gpuaas::agent

#include "services/agent/backoff.h"

#include <algorithm>

namespace gpuaas::agent {

Backoff::Backoff(Options options, uint64_t seed) : options_(options), rng_(seed) {}

absl::Duration Backoff::Next() {
  absl::Duration ceiling = options_.initial;
  for (int i = 0; i < attempt_ && ceiling < options_.max; ++i) {
    ceiling *= 2;
  }
  ceiling = std::min(ceiling, options_.max);
  if (ceiling < options_.max) {
    ++attempt_;
  }
  std::uniform_real_distribution<double> half(0.5, 1.0);
  return ceiling * half(rng_);
}

}  // namespace gpuaas::agent

#include "libs/common/backoff.h"

#include <algorithm>

#include "absl/random/random.h"

namespace gpuaas {

namespace {

uint64_t NewSeed() {
  thread_local absl::BitGen gen;
  return absl::Uniform<uint64_t>(gen);
}

}  // namespace

Backoff::Backoff(Options options) : Backoff(options, NewSeed()) {}

Backoff::Backoff(Options options, uint64_t seed) : options_(options), rng_(seed) {
  options_.jitter = std::clamp(options_.jitter, 0.0, 1.0);
}

absl::Duration Backoff::Ceiling(const Options& options, int64_t attempt) {
  absl::Duration ceiling = options.initial;
  for (int64_t i = 0; i < attempt && ceiling < options.max; ++i) {
    ceiling *= 2;
  }
  return std::min(ceiling, options.max);
}

absl::Duration Backoff::Next() {
  const absl::Duration ceiling = Ceiling(options_, attempt_);
  if (ceiling < options_.max) {
    ++attempt_;
  }
  if (options_.jitter == 0) {
    return ceiling;
  }
  std::uniform_real_distribution<double> share(1.0 - options_.jitter, 1.0);
  return ceiling * share(rng_);
}

}  // namespace gpuaas

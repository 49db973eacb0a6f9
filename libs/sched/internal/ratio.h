// The share `part` of `whole`, 0 when there is no whole: what the policies score nodes by.
#pragma once

#include <cstdint>

namespace gpuaas::sched::internal {

inline double Ratio(int64_t part, int64_t whole) {
  return whole > 0 ? static_cast<double>(part) / static_cast<double>(whole) : 0.0;
}

}  // namespace gpuaas::sched::internal

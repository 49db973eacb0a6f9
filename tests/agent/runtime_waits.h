// A workload's status as a Runtime lists it, and waiting for one of its states: the runtime
// tests' common reads (the process kind and the container kind).
#pragma once

#include <optional>
#include <string>

#include "absl/time/time.h"
#include "libs/testing/eventually.h"
#include "services/agent/runtime/runtime.h"

namespace gpuaas::agent::testing {

inline std::optional<instance::v1::WorkloadStatus> WorkloadStatusOf(const Runtime& runtime,
                                                                    const std::string& id) {
  for (const auto& s : runtime.List()) {
    if (s.workload_id() == id) return s;
  }
  return std::nullopt;
}

inline bool WaitWorkloadState(const Runtime& runtime, const std::string& id,
                              instance::v1::WorkloadState state, absl::Duration timeout) {
  return gpuaas::testing::Eventually(
      [&] {
        auto s = WorkloadStatusOf(runtime, id);
        return s && s->state() == state;
      },
      timeout);
}

}  // namespace gpuaas::agent::testing

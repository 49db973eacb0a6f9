// A test that cannot run on this machine (not root, a tool not installed) skips on a developer's
// machine and fails under CI=true: CI installs every tool and runs as root, so a skip there means
// a suite silently did not run, and CI must never pass by skipping.
//
//   if (geteuid() != 0) GPUAAS_SKIP_OR_FAIL_IN_CI() << "containers need root";
//
// What a machine may lack by design (a real NVIDIA driver, a capability outside this VM's
// bounding set) stays a plain GTEST_SKIP with its reason.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

namespace gpuaas::testing {

// True when CI=true (or 1) in the environment.
inline bool RunningUnderCi() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && (std::string_view(ci) == "true" || std::string_view(ci) == "1");
}

}  // namespace gpuaas::testing

// Returns from the test (or its SetUp) as skipped, or as failed under CI; the reason is streamed.
#define GPUAAS_SKIP_OR_FAIL_IN_CI()                                                                \
  return GTEST_MESSAGE_(                                                                           \
      ::gpuaas::testing::RunningUnderCi() ? "CI=true, where a test that cannot run is a failure: " \
                                          : "",                                                    \
      ::gpuaas::testing::RunningUnderCi() ? ::testing::TestPartResult::kFatalFailure               \
                                          : ::testing::TestPartResult::kSkip)

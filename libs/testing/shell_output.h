// Runs a shell command for test helpers that drive the repository's scripts (tools/pg-cluster,
// tools/pg-ha) and read what they print.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gpuaas::testing {

// Runs `command` with /bin/sh (the test's environment; stderr passes through) and returns its
// stdout. Blocks until it exits. Errors: INTERNAL (could not start, or exited non-zero; the
// message names the command and its exit status).
absl::StatusOr<std::string> ShellOutput(const std::string& command);

}  // namespace gpuaas::testing

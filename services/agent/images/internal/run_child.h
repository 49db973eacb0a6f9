// Runs a helper program (skopeo; umoci in tests) and collects its exit and stderr.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace gpuaas::agent {

struct ChildResult {
  int exit_code = -1;       // -1 when it did not exit normally
  int signal = 0;           // the signal that ended it, if one did
  std::string stderr_text;  // its last 64 KiB at most
};

// Runs argv (argv[0] an absolute path) with exactly `env`, stdin on /dev/null, stdout into
// `stdout_path` (created 0600; empty: /dev/null), and waits for it. Blocks. Error:
// FAILED_PRECONDITION when it cannot be started.
absl::StatusOr<ChildResult> RunChild(const std::vector<std::string>& argv,
                                     const std::vector<std::string>& env,
                                     const std::string& stdout_path = "");

}  // namespace gpuaas::agent

// Runs the real clients the image tests drive (python3 scripts, the AWS CLI, gpuaasctl, curl) as
// child processes with an exact environment, so nothing of the user's (proxies, ~/.aws, a
// pyenv python3 first in PATH) changes what they do.
#pragma once

#include <string>
#include <vector>

namespace gpuaas::images_testing {

struct CommandOutput {
  int exit_code = -1;  // -1 when it could not start or did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
};

// Runs argv[0] (an absolute path) with `env` plus PATH=/usr/bin:/bin and waits for it.
// Blocks; stdout and stderr are read whole.
CommandOutput RunCommand(const std::vector<std::string>& argv, const std::vector<std::string>& env);

}  // namespace gpuaas::images_testing

#include "libs/testing/shell_output.h"

#include <sys/wait.h>

#include <array>
#include <cstdio>

#include "absl/strings/str_cat.h"

namespace gpuaas::testing {

absl::StatusOr<std::string> ShellOutput(const std::string& command) {
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return absl::InternalError(absl::StrCat("popen failed: ", command));
  std::string out;
  std::array<char, 512> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int rc = pclose(pipe);
  if (rc != 0) {
    return absl::InternalError(
        absl::StrCat("`", command, "` exited with ", WIFEXITED(rc) ? WEXITSTATUS(rc) : rc));
  }
  return out;
}

}  // namespace gpuaas::testing

#include "services/agent/runtime/host_gpu_driver.h"

#include <stdio.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuaas::agent {

std::vector<std::string> LdconfigDriverDirs(absl::string_view ldconfig_output) {
  // Lines look like "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1".
  std::vector<std::string> dirs;
  for (absl::string_view line : absl::StrSplit(ldconfig_output, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::StartsWith(line, "libcuda.") && !absl::StartsWith(line, "libnvidia-")) {
      continue;
    }
    if (!absl::StrContains(line, "x86-64") && !absl::StrContains(line, "AArch64")) {
      continue;  // the 32-bit copies serve 32-bit programs, which CUDA does not run
    }
    const size_t arrow = line.find(" => ");
    const size_t slash = line.rfind('/');
    if (arrow == absl::string_view::npos || slash == absl::string_view::npos || slash < arrow) {
      continue;
    }
    std::string dir(line.substr(arrow + 4, slash - arrow - 4));
    if (!dir.empty() && std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) {
      dirs.push_back(std::move(dir));
    }
  }
  return dirs;
}

absl::StatusOr<GpuHost> FindHostGpuDriver() {
  FILE* ldconfig = popen("/sbin/ldconfig -p 2>/dev/null", "r");
  if (ldconfig == nullptr) {
    return absl::FailedPreconditionError("cannot run /sbin/ldconfig -p");
  }
  std::string output;
  char buf[4096];
  size_t n = 0;
  while ((n = fread(buf, 1, sizeof buf, ldconfig)) > 0) {
    output.append(buf, n);
  }
  if (pclose(ldconfig) != 0) {
    return absl::FailedPreconditionError("/sbin/ldconfig -p failed");
  }
  GpuHost host;
  host.library_dirs = LdconfigDriverDirs(output);
  if (host.library_dirs.empty()) {
    return absl::FailedPreconditionError(
        "the loader's cache (ldconfig -p) lists no NVIDIA driver library (libcuda, libnvidia-*): "
        "is the driver installed? --simulate-gpus runs without GPUs");
  }
  return host;
}

}  // namespace gpuaas::agent

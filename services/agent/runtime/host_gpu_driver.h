// Where a GPU host's NVIDIA driver is: its device nodes in /dev, its libraries where the host's
// loader finds them (its ld.so cache, as `ldconfig -p` prints it), its tools in /usr/bin.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/agent/runtime/gpu_injection.h"

namespace gpuaas::agent {

// The directories of the driver's 64-bit libraries (libcuda*, libnvidia-*) in `ldconfig -p`
// output, in the cache's order, each once.
std::vector<std::string> LdconfigDriverDirs(absl::string_view ldconfig_output);

// This host's driver, its libraries found by running `ldconfig -p`. Blocks on ldconfig.
// Errors: FAILED_PRECONDITION when ldconfig cannot run or lists no driver library.
absl::StatusOr<GpuHost> FindHostGpuDriver();

}  // namespace gpuaas::agent

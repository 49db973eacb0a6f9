// Reading small configuration files (certificates, keys, secrets) whole.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gpuaas {

// The whole content of `path`. Errors: FAILED_PRECONDITION naming the file when it cannot be
// read or is empty (an empty certificate or key is always a mistake in the configuration).
// Blocks on file I/O.
absl::StatusOr<std::string> ReadNonEmptyFile(const std::string& path);

}  // namespace gpuaas

// Reading small files whole: certificates, keys, password files, secrets.
#pragma once

#include <string>

#include "absl/status/statusor.h"

namespace gpuaas {

// The file's bytes. Blocks on disk I/O. Error: NOT_FOUND naming the path when it cannot be
// opened or read.
absl::StatusOr<std::string> ReadFile(const std::string& path);

// Whether a file system (or a bind mount) is mounted at `path`. Not by st_dev: a bind mount of
// a directory of the same file system keeps its device.
bool IsMountPoint(const std::string& path);

// ReadFile for configuration that is never empty (certificates, keys). Errors:
// FAILED_PRECONDITION naming the file when it cannot be read or is empty.
absl::StatusOr<std::string> ReadNonEmptyFile(const std::string& path);

// The file's first line without its line ending: for password and secret files written by
// `echo` or an editor. Error: NOT_FOUND as ReadFile, INVALID_ARGUMENT when the file is empty.
absl::StatusOr<std::string> ReadSecretFile(const std::string& path);

}  // namespace gpuaas

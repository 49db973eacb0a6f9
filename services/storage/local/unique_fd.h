// File descriptors that close themselves (libs/common), and errno turned into absl::Status, for the
// local backend's *at() system calls.
#pragma once

#include <string_view>

#include "absl/status/status.h"
#include "libs/common/unique_fd.h"

namespace gpuaas::storage::local {

using UniqueFd = ::gpuaas::UniqueFd;

// `what` failed with `err`: the code a caller can act on (ENOENT → NOT_FOUND, ELOOP/EXDEV →
// PERMISSION_DENIED, ENOSPC → RESOURCE_EXHAUSTED, ENOTDIR/EISDIR → FAILED_PRECONDITION, ...),
// and a message "<what>: <strerror>". `what` must not name host paths that clients may see.
absl::Status ErrnoStatus(int err, std::string_view what);

}  // namespace gpuaas::storage::local

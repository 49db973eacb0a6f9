// A failed system call's errno as an absl::Status with the code a caller can act on: the one
// mapping for the whole tree (files, *at() calls, mounts, namespaces).
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace gpuaas {

// `what` failed with `err`: ENOENT → NOT_FOUND; ELOOP, EXDEV, EACCES, EPERM → PERMISSION_DENIED
// (a symlink or another file system on a path that must have neither is refused, not missing);
// ENOSPC, EDQUOT, EFBIG → RESOURCE_EXHAUSTED; ENOTDIR, EISDIR, ENOTEMPTY, EEXIST →
// FAILED_PRECONDITION; EMFILE, ENFILE, ENOMEM, EAGAIN, EINTR, EBUSY → UNAVAILABLE; EINVAL,
// ENAMETOOLONG → INVALID_ARGUMENT; anything else INTERNAL. The message is "<what>: <strerror>";
// `what` must not name host paths that clients may see.
absl::Status ErrnoStatus(int err, std::string_view what);

}  // namespace gpuaas

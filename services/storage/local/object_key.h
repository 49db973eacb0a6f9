// What the local backend accepts as an object key and as a storage id, before any of it
// reaches a path: keys are relative paths of plain names ("a/b/c.txt"), storage ids single
// names. Refusing "", ".", ".." and "/" in the right places here is the first of two fences; the
// second is resolving every path beneath the volume's directory (safe_path.h).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"

namespace gpuaas::storage::local {

inline constexpr size_t kMaxKeyBytes = 1024;
// A file name's limit on Linux file systems (NAME_MAX).
inline constexpr size_t kMaxSegmentBytes = 255;

// INVALID_ARGUMENT naming `key` when it is empty, longer than 1,024 bytes, starts with "/",
// holds an empty, "." or ".." segment (so also "a//b" and a trailing "/"), a NUL byte, or a
// segment longer than a file name may be (255 bytes).
absl::Status ValidateKey(std::string_view key);

// `key "a/b"`, for messages.
std::string Quoted(std::string_view key);

// A valid key's segments: "a/b/c" → {"a", "b", "c"}.
std::vector<std::string> KeySegments(std::string_view key);

// Whether `name` (one directory entry) can be a segment of a key: not empty, ".", ".." and
// without "/" or NUL.
bool IsKeySegment(std::string_view name);

// INVALID_ARGUMENT naming the storage_id unless it is 1..128 of [A-Za-z0-9_.-] and does not
// start with "." (it names a directory under the data root).
absl::Status ValidateStorageId(std::string_view storage_id);

}  // namespace gpuaas::storage::local

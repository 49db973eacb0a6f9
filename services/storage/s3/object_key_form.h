// Which object keys the S3 endpoint takes, before any reaches the backend. Storages are
// directories, so a key is a relative path: what cannot be one is refused here with the S3 error
// MinIO (the other filesystem-backed S3) answers, and the backend's own check (ValidateKey) and
// its resolution beneath the volume (safe_path.h) stand behind it. README.md's "Object keys"
// table lists each form clients send and what becomes of it.
#pragma once

#include <string_view>

#include "absl/status/status.h"

namespace gpuaas::storage::s3 {

// `key` as decoded from the path (or x-amz-copy-source). KeyTooLongError over 1,024 bytes;
// InvalidArgument, naming the rule, for invalid UTF-8, a NUL, a leading "/", an empty segment
// ("a//b", "a//"), a "." or ".." segment (split at "/" or "\", surrounding spaces ignored, as
// MinIO does) or a segment over 255 bytes. One trailing "/" is a folder marker's key ("a/b/").
absl::Status CheckObjectKey(std::string_view key);

}  // namespace gpuaas::storage::s3

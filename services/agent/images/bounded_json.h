// JSON from a registry (manifests, indexes, image configs) read under caps: a byte limit checked
// before anything is parsed, and a nesting limit checked by a scan of the text before nlohmann
// builds a tree (real manifests and configs nest 4 or 5 deep; a hostile one nested a million deep
// would make every recursive walk of the tree, a copy or a dump, overflow the stack).
#pragma once

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "nlohmann/json.hpp"

namespace gpuaas::agent {

// containers/image's own limits for manifests and configs (iolimits.go): a registry that serves
// more is hostile or broken.
inline constexpr size_t kMaxManifestBytes = 4 << 20;
inline constexpr size_t kMaxConfigBytes = 4 << 20;
inline constexpr int kMaxJsonDepth = 32;
// Descriptors one manifest or index may list: far above any real image's.
inline constexpr size_t kMaxDescriptors = 1000;

// `text` parsed as JSON. Errors: INVALID_ARGUMENT "<what>: ..." naming the limit exceeded
// (longer than `max_bytes`, nested deeper than kMaxJsonDepth) or the syntax error.
absl::StatusOr<nlohmann::json> ParseBoundedJson(absl::string_view text, absl::string_view what,
                                                size_t max_bytes);

// The file's bytes, refusing one longer than `max_bytes` before reading it (INVALID_ARGUMENT
// naming `what`); NOT_FOUND when it is missing, INTERNAL for other I/O errors.
absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, absl::string_view what,
                                            size_t max_bytes);

}  // namespace gpuaas::agent

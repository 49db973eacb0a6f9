// Range and conditional request headers of GET/HEAD Object (RFC 9110 §13-14 as S3 applies
// them).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuaas::storage::s3 {

struct ByteRange {
  int64_t first = 0;
  int64_t length = 0;
};

// "bytes=a-b", "bytes=a-" or "bytes=-n" against an object of `size` bytes. nullopt when the
// header is absent, not of those forms, or names several ranges (S3 then serves the whole
// object). InvalidRange when it cannot be satisfied.
absl::StatusOr<std::optional<ByteRange>> ParseRange(std::string_view header, int64_t size);

enum class Precondition { kProceed, kNotModified, kFailed };

struct ConditionalHeaders {
  std::string_view if_match;
  std::string_view if_none_match;
  std::string_view if_modified_since;
  std::string_view if_unmodified_since;
};

// `etag` without quotes. If-Match/If-Unmodified-Since fail with 412; If-None-Match and
// If-Modified-Since give 304 (the caller answers 412 instead for writes).
Precondition EvaluatePreconditions(const ConditionalHeaders& headers, std::string_view etag,
                                   absl::Time last_modified);

// RFC 1123 ("Sun, 06 Nov 1994 08:49:37 GMT"); nullopt when it is not one.
std::optional<absl::Time> ParseHttpTime(std::string_view text);

}  // namespace gpuaas::storage::s3

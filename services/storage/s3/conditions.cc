#include "services/storage/s3/conditions.h"

#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/internal/views.h"

namespace gpuaas::storage::s3 {
namespace {

// True when `etag` is in the comma-separated list of (possibly quoted, possibly weak) tags.
bool MatchesAny(std::string_view list, std::string_view etag_text) {
  absl::string_view etag = Av(etag_text);
  for (absl::string_view tag : absl::StrSplit(Av(list), ',')) {
    tag = absl::StripAsciiWhitespace(tag);
    if (tag == "*") {
      return true;
    }
    absl::ConsumePrefix(&tag, "W/");
    if (tag.size() >= 2 && tag.front() == '"' && tag.back() == '"') {
      tag = tag.substr(1, tag.size() - 2);
    }
    if (tag == etag) {
      return true;
    }
  }
  return false;
}

}  // namespace

absl::StatusOr<std::optional<ByteRange>> ParseRange(std::string_view header_text, int64_t size) {
  absl::string_view header = absl::StripAsciiWhitespace(Av(header_text));
  if (!absl::ConsumePrefix(&header, "bytes=") || header.find(',') != absl::string_view::npos) {
    return std::optional<ByteRange>();
  }
  size_t dash = header.find('-');
  if (dash == absl::string_view::npos) {
    return std::optional<ByteRange>();
  }
  absl::string_view first_text = absl::StripAsciiWhitespace(header.substr(0, dash));
  absl::string_view last_text = absl::StripAsciiWhitespace(header.substr(dash + 1));
  int64_t first = 0;
  int64_t last = 0;
  auto unsatisfiable = [] {
    return S3Status("InvalidRange", "The requested range is not satisfiable");
  };
  if (first_text.empty()) {  // suffix: the last n bytes
    if (!absl::SimpleAtoi(last_text, &last) || last < 0) {
      return std::optional<ByteRange>();
    }
    if (last == 0 || size == 0) {
      return unsatisfiable();
    }
    int64_t length = std::min(last, size);
    return std::optional<ByteRange>(ByteRange{size - length, length});
  }
  if (!absl::SimpleAtoi(first_text, &first) || first < 0) {
    return std::optional<ByteRange>();
  }
  if (last_text.empty()) {
    last = size - 1;
  } else if (!absl::SimpleAtoi(last_text, &last) || last < first) {
    return std::optional<ByteRange>();
  }
  if (first >= size) {
    return unsatisfiable();
  }
  last = std::min(last, size - 1);
  return std::optional<ByteRange>(ByteRange{first, last - first + 1});
}

Precondition EvaluatePreconditions(const ConditionalHeaders& h, std::string_view etag,
                                   absl::Time last_modified) {
  // HTTP dates have whole seconds.
  absl::Time modified = absl::FromUnixSeconds(absl::ToUnixSeconds(last_modified));
  if (!h.if_match.empty()) {
    if (!MatchesAny(h.if_match, etag)) {
      return Precondition::kFailed;
    }
  } else if (!h.if_unmodified_since.empty()) {
    auto since = ParseHttpTime(h.if_unmodified_since);
    if (since && modified > *since) {
      return Precondition::kFailed;
    }
  }
  if (!h.if_none_match.empty()) {
    if (MatchesAny(h.if_none_match, etag)) {
      return Precondition::kNotModified;
    }
  } else if (!h.if_modified_since.empty()) {
    auto since = ParseHttpTime(h.if_modified_since);
    if (since && modified <= *since) {
      return Precondition::kNotModified;
    }
  }
  return Precondition::kProceed;
}

std::optional<absl::Time> ParseHttpTime(std::string_view text) {
  absl::Time t;
  std::string err;
  if (!absl::ParseTime("%a, %d %b %Y %H:%M:%S GMT", std::string(text), absl::UTCTimeZone(), &t,
                       &err)) {
    return std::nullopt;
  }
  return t;
}

}  // namespace gpuaas::storage::s3

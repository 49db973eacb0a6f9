#include "services/storage/s3/object_key_form.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/internal/views.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr size_t kMaxKeyBytes = 1024;     // AWS's limit
constexpr size_t kMaxSegmentBytes = 255;  // NAME_MAX: one file or directory name

// UTF-8 as RFC 3629 has it: no overlong forms, no surrogates, nothing past U+10FFFF.
bool IsUtf8(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    size_t extra;
    unsigned char lo = 0x80, hi = 0xBF;  // the second byte's range
    if (c < 0x80) {
      ++i;
      continue;
    } else if (c >= 0xC2 && c <= 0xDF) {
      extra = 1;
    } else if (c >= 0xE0 && c <= 0xEF) {
      extra = 2;
      if (c == 0xE0) lo = 0xA0;
      if (c == 0xED) hi = 0x9F;
    } else if (c >= 0xF0 && c <= 0xF4) {
      extra = 3;
      if (c == 0xF0) lo = 0x90;
      if (c == 0xF4) hi = 0x8F;
    } else {
      return false;
    }
    if (i + extra >= s.size()) {
      return false;
    }
    for (size_t k = 1; k <= extra; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      if (k == 1 ? (b < lo || b > hi) : (b < 0x80 || b > 0xBF)) {
        return false;
      }
    }
    i += extra + 1;
  }
  return true;
}

absl::Status Invalid(std::string_view key, std::string_view why) {
  return S3Status("InvalidArgument", absl::StrCat("Object key \"", Av(key), "\": ", Av(why)));
}

}  // namespace

absl::Status CheckObjectKey(std::string_view key) {
  if (key.size() > kMaxKeyBytes) {
    return S3Status("KeyTooLongError", absl::StrCat("Your key is too long: ", key.size(),
                                                    " bytes, at most ", kMaxKeyBytes));
  }
  if (!IsUtf8(key)) {
    return Invalid(key, "must be UTF-8");
  }
  if (key.find('\0') != std::string_view::npos) {
    return Invalid(key, "must not contain a NUL byte");
  }
  if (!key.empty() && key.front() == '/') {
    return Invalid(key, "must not start with \"/\"");
  }
  // One trailing "/" makes a folder marker's key ("a/b/"); its path is checked as any key's.
  if (key.size() > 1 && key.back() == '/') {
    key.remove_suffix(1);
  }
  size_t start = 0;
  while (start <= key.size()) {
    size_t end = key.find('/', start);
    std::string_view segment =
        key.substr(start, end == std::string_view::npos ? key.npos : end - start);
    if (segment.empty()) {
      return Invalid(key, "an empty path segment (\"//\") has no file to be");
    }
    if (segment.size() > kMaxSegmentBytes) {
      return Invalid(key, absl::StrCat("a path segment of ", segment.size(), " bytes; at most ",
                                       kMaxSegmentBytes, " between slashes"));
    }
    // "\" is no separator here, but is one to Windows clients that later sync the files down.
    size_t part_start = 0;
    while (part_start <= segment.size()) {
      size_t part_end = segment.find('\\', part_start);
      std::string_view part = Sv(absl::StripAsciiWhitespace(Av(segment.substr(
          part_start, part_end == std::string_view::npos ? segment.npos : part_end - part_start))));
      if (part == "." || part == "..") {
        return Invalid(key, "\".\" and \"..\" path segments are not allowed");
      }
      if (part_end == std::string_view::npos) break;
      part_start = part_end + 1;
    }
    if (end == std::string_view::npos) break;
    start = end + 1;
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::s3

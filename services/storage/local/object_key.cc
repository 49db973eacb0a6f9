#include "services/storage/local/object_key.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuaas::storage::local {

bool IsKeySegment(std::string_view name) {
  return !name.empty() && name != "." && name != ".." &&
         name.find_first_of(std::string_view("/\0", 2)) == std::string_view::npos;
}

absl::Status ValidateKey(std::string_view key) {
  if (key.empty()) {
    return absl::InvalidArgumentError("key: must not be empty");
  }
  if (key.size() > kMaxKeyBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("key: ", key.size(), " bytes, at most ", kMaxKeyBytes, " allowed"));
  }
  if (key.find('\0') != std::string_view::npos) {
    return absl::InvalidArgumentError("key: must not contain a NUL byte");
  }
  if (key.front() == '/') {
    return absl::InvalidArgumentError(
        absl::StrCat("key \"", std::string(key), "\": must not start with \"/\""));
  }
  for (absl::string_view segment : absl::StrSplit(absl::string_view(key.data(), key.size()), '/')) {
    if (segment.empty() || segment == "." || segment == "..") {
      return absl::InvalidArgumentError(absl::StrCat(
          "key \"", std::string(key), "\": empty, \".\" and \"..\" path segments are not allowed"));
    }
    if (segment.size() > kMaxSegmentBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("key \"", std::string(key), "\": a path segment of ", segment.size(),
                       " bytes; at most ", kMaxSegmentBytes, " between slashes"));
    }
  }
  return absl::OkStatus();
}

std::string Quoted(std::string_view key) { return absl::StrCat("key \"", std::string(key), "\""); }

std::vector<std::string> KeySegments(std::string_view key) {
  return absl::StrSplit(absl::string_view(key.data(), key.size()), '/');
}

absl::Status ValidateStorageId(std::string_view storage_id) {
  const auto invalid = [&](std::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("storage_id \"", std::string(storage_id), "\": ", std::string(why)));
  };
  if (storage_id.empty() || storage_id.size() > 128) {
    return invalid("must be 1 to 128 characters");
  }
  if (storage_id.front() == '.') {
    return invalid("must not start with \".\"");
  }
  for (char c : storage_id) {
    const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '-' || c == '.';
    if (!ok) {
      return invalid("only letters, digits, \"_\", \"-\" and \".\" are allowed");
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::local

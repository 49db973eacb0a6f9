#include "services/agent/images/bounded_json.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "libs/common/unique_fd.h"

namespace gpuaas::agent {
namespace {

// The deepest nesting of arrays and objects in `text`, stopping once past `limit` (brackets
// inside strings do not count).
int NestingDepth(absl::string_view text, int limit) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) {
        escaped = false;
      } else if (c == '\\') {
        escaped = true;
      } else if (c == '"') {
        in_string = false;
      }
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) {
        return deepest;
      }
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

}  // namespace

absl::StatusOr<nlohmann::json> ParseBoundedJson(absl::string_view text, absl::string_view what,
                                                size_t max_bytes) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", text.size(), " bytes, more than the limit of ", max_bytes));
  }
  if (NestingDepth(text, kMaxJsonDepth) > kMaxJsonDepth) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": nested deeper than the limit of ", kMaxJsonDepth));
  }
  nlohmann::json parsed = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return absl::InvalidArgumentError(absl::StrCat(what, ": not JSON"));
  }
  return parsed;
}

absl::StatusOr<std::string> ReadBoundedFile(const std::string& path, absl::string_view what,
                                            size_t max_bytes) {
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  struct stat st;
  if (!fd.valid() || ::fstat(fd.get(), &st) != 0) {
    if (errno == ENOENT) {
      return absl::NotFoundError(absl::StrCat(what, ": missing"));
    }
    return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", st.st_size, " bytes, more than the limit of ", max_bytes));
  }
  // One byte more than the limit tells a file that grew since fstat.
  std::string text(max_bytes + 1, '\0');
  size_t have = 0;
  while (have < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + have, text.size() - have);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n < 0) {
      return absl::InternalError(absl::StrCat(what, ": ", strerror(errno)));
    }
    if (n == 0) {
      break;
    }
    have += static_cast<size_t>(n);
  }
  if (have > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": more than the limit of ", max_bytes, " bytes"));
  }
  text.resize(have);
  return text;
}

}  // namespace gpuaas::agent

#include "libs/common/files.h"

#include <fcntl.h>
#include <sys/stat.h>

#include <fstream>
#include <sstream>

namespace gpuaas {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream content;
  if (!in || !(content << in.rdbuf())) {
    // An empty file makes operator<< fail too; it is still a readable file.
    if (in && in.peek() == std::ifstream::traits_type::eof()) {
      return std::string();
    }
    return absl::NotFoundError("cannot read " + path);
  }
  return content.str();
}

absl::StatusOr<std::string> ReadNonEmptyFile(const std::string& path) {
  absl::StatusOr<std::string> content = ReadFile(path);
  if (!content.ok()) {
    return absl::FailedPreconditionError("cannot read " + path);
  }
  if (content->empty()) {
    return absl::FailedPreconditionError("empty file " + path);
  }
  return content;
}

absl::StatusOr<std::string> ReadSecretFile(const std::string& path) {
  absl::StatusOr<std::string> content = ReadFile(path);
  if (!content.ok()) {
    return content.status();
  }
  std::string line = content->substr(0, content->find('\n'));
  if (!line.empty() && line.back() == '\r') {
    line.pop_back();
  }
  if (line.empty()) {
    return absl::InvalidArgumentError(path + " is empty");
  }
  return line;
}

bool IsMountPoint(const std::string& path) {
  struct statx stx {};
  return statx(AT_FDCWD, path.c_str(), AT_SYMLINK_NOFOLLOW, 0, &stx) == 0 &&
         (stx.stx_attributes_mask & STATX_ATTR_MOUNT_ROOT) != 0 &&
         (stx.stx_attributes & STATX_ATTR_MOUNT_ROOT) != 0;
}

}  // namespace gpuaas

#include "libs/common/files.h"

#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace gpuaas {

absl::StatusOr<std::string> ReadNonEmptyFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::FailedPreconditionError(absl::StrCat("cannot read ", path));
  }
  std::ostringstream content;
  content << in.rdbuf();
  if (content.str().empty()) {
    return absl::FailedPreconditionError(absl::StrCat("empty file ", path));
  }
  return content.str();
}

}  // namespace gpuaas

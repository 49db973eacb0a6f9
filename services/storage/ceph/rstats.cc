#include "services/storage/ceph/rstats.h"

#include <errno.h>
#include <sys/xattr.h>

#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/common/errno_status.h"
#include "libs/common/unique_fd.h"

namespace gpuaas::storage::ceph {
namespace {

absl::StatusOr<int64_t> ReadNumber(int dir_fd, const std::string& xattr) {
  char buf[32];
  const ssize_t n = ::fgetxattr(dir_fd, xattr.c_str(), buf, sizeof buf - 1);
  if (n < 0) {
    // A quota never set reads as ENODATA on some clients.
    if (errno == ENODATA && xattr.starts_with("ceph.quota.")) {
      return 0;
    }
    return ErrnoStatus(errno, xattr);
  }
  int64_t value = 0;
  if (!absl::SimpleAtoi(absl::string_view(buf, static_cast<size_t>(n)), &value)) {
    return absl::InternalError(absl::StrCat(xattr, ": not a number"));
  }
  return value;
}

}  // namespace

absl::StatusOr<VolumeUsage> ReadRecursiveUsage(int dir_fd) {
  absl::StatusOr<int64_t> bytes = ReadNumber(dir_fd, "ceph.dir.rbytes");
  if (!bytes.ok()) {
    return bytes.status();
  }
  absl::StatusOr<int64_t> files = ReadNumber(dir_fd, "ceph.dir.rfiles");
  if (!files.ok()) {
    return files.status();
  }
  return VolumeUsage{*bytes, *files};
}

absl::StatusOr<int64_t> ReadQuota(int dir_fd, std::string_view name) {
  return ReadNumber(dir_fd, absl::StrCat("ceph.quota.", std::string(name)));
}

absl::Status WriteQuota(int dir_fd, std::string_view name, int64_t value) {
  const std::string xattr = absl::StrCat("ceph.quota.", std::string(name));
  const std::string text = absl::StrCat(value);
  if (::fsetxattr(dir_fd, xattr.c_str(), text.data(), text.size(), 0) != 0) {
    return ErrnoStatus(errno, xattr);
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::ceph

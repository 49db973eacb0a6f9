#include "services/storage/local/folder_marker.h"

#include <errno.h>
#include <sys/stat.h>
#include <sys/xattr.h>

#include "absl/strings/match.h"

namespace gpuaas::storage::local {
namespace {

constexpr char kXattr[] = "user.gpuaas.folder";
// The MD5 of no bytes: what S3 answers for a zero-byte object.
constexpr char kEmptyMd5[] = "d41d8cd98f00b204e9800998ecf8427e";

class EmptyReader final : public ObjectReader {
 public:
  explicit EmptyReader(ObjectInfo info) : info_(std::move(info)) {}
  const ObjectInfo& info() const override { return info_; }
  absl::StatusOr<size_t> ReadAt(int64_t, char*, size_t) override { return 0; }

 private:
  ObjectInfo info_;
};

}  // namespace

bool IsFolderKey(std::string_view key) {
  return key.size() > 1 && key.back() == '/' && key[key.size() - 2] != '/';
}

bool IsFolderMarker(int dir_fd) { return ::fgetxattr(dir_fd, kXattr, nullptr, 0) >= 0; }

absl::StatusOr<bool> MarkFolder(int dir_fd) {
  if (::fsetxattr(dir_fd, kXattr, "", 0, XATTR_CREATE) == 0) return true;
  if (errno == EEXIST) return false;
  if (errno == ENOTSUP) {
    return absl::UnimplementedError("this volume's file system keeps no folder markers");
  }
  return absl::InternalError(absl::StrCat("mark a folder: ", std::strerror(errno)));
}

bool UnmarkFolder(int dir_fd) { return ::fremovexattr(dir_fd, kXattr) == 0; }

ObjectInfo FolderInfo(int dir_fd, std::string key) {
  ObjectInfo info;
  info.key = std::move(key);
  info.size = 0;
  info.etag = kEmptyMd5;
  struct stat st;
  if (::fstat(dir_fd, &st) == 0) info.modify_time = absl::TimeFromTimespec(st.st_mtim);
  return info;
}

std::unique_ptr<ObjectReader> FolderReader(ObjectInfo info) {
  return std::make_unique<EmptyReader>(std::move(info));
}

}  // namespace gpuaas::storage::local

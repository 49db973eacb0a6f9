#include "services/storage/local/dir_reader.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include <memory>

#include "libs/common/errno_status.h"
#include "libs/common/unique_fd.h"

namespace gpuaas::storage::local {
namespace {

struct DirCloser {
  void operator()(DIR* dir) const { ::closedir(dir); }
};

}  // namespace

EntryType TypeOf(unsigned mode) {
  if (S_ISREG(mode)) {
    return EntryType::kFile;
  }
  if (S_ISDIR(mode)) {
    return EntryType::kDir;
  }
  return EntryType::kOther;
}

absl::Status StatNoFollow(int dir_fd, const char* name, struct stat* st) {
  if (::fstatat(dir_fd, name, st, AT_SYMLINK_NOFOLLOW) != 0) {
    return ErrnoStatus(errno, "stat");
  }
  return absl::OkStatus();
}

absl::Status ReadDir(int dir_fd,
                     absl::FunctionRef<bool(std::string_view name, EntryType type)> visit) {
  // A fresh open file description: a dup() would share (and move) the caller's offset.
  const int own = ::openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (own < 0) {
    return ErrnoStatus(errno, "open directory");
  }
  std::unique_ptr<DIR, DirCloser> dir(::fdopendir(own));
  if (dir == nullptr) {
    const int err = errno;
    ::close(own);
    return ErrnoStatus(err, "read directory");
  }
  while (true) {
    errno = 0;
    const dirent* entry = ::readdir(dir.get());
    if (entry == nullptr) {
      if (errno != 0) {
        return ErrnoStatus(errno, "read directory");
      }
      return absl::OkStatus();
    }
    const std::string_view name(entry->d_name);
    if (name == "." || name == "..") {
      continue;
    }
    EntryType type = EntryType::kOther;
    switch (entry->d_type) {
      case DT_REG:
        type = EntryType::kFile;
        break;
      case DT_DIR:
        type = EntryType::kDir;
        break;
      case DT_UNKNOWN: {
        struct stat st;
        if (!StatNoFollow(::dirfd(dir.get()), entry->d_name, &st).ok()) {
          continue;  // gone meanwhile
        }
        type = TypeOf(st.st_mode);
        break;
      }
      default:
        break;
    }
    if (!visit(name, type)) {
      return absl::OkStatus();
    }
  }
}

}  // namespace gpuaas::storage::local

#include "services/storage/local/safe_path.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "services/storage/local/dir_reader.h"
#include "services/storage/local/folder_marker.h"

namespace gpuaas::storage::local {
namespace {

constexpr uint64_t kResolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS;
constexpr int kDirFlags = O_RDONLY | O_DIRECTORY;

absl::Status PathError(int err, std::string_view what) {
  const std::string subject(what);
  switch (err) {
    case ELOOP:
      return absl::PermissionDeniedError(
          absl::StrCat(subject, ": a symlink on the path (symlinks are never followed)"));
    case EXDEV:
      return absl::PermissionDeniedError(absl::StrCat(subject, ": leads outside the volume"));
    case ENOTDIR:
      return absl::FailedPreconditionError(
          absl::StrCat(subject, ": passes through a file where a directory is expected"));
    case ENOENT:
      return absl::NotFoundError(absl::StrCat(subject, ": not found"));
    default:
      return ErrnoStatus(err, subject);
  }
}

}  // namespace

absl::StatusOr<UniqueFd> OpenBeneath(int dir_fd, const std::string& path, int flags,
                                     std::string_view what) {
  open_how how{};
  how.flags = static_cast<uint64_t>(flags | O_CLOEXEC);
  how.mode = (flags & O_CREAT) != 0 ? 0666 : 0;
  how.resolve = kResolve;
  const char* p = path.empty() ? "." : path.c_str();
  while (true) {
    const long fd = ::syscall(SYS_openat2, dir_fd, p, &how, sizeof how);
    if (fd >= 0) {
      return UniqueFd(static_cast<int>(fd));
    }
    if (errno == EINTR || errno == EAGAIN) {
      continue;
    }
    return PathError(errno, what);
  }
}

absl::StatusOr<UniqueFd> OpenDirBeneath(int dir_fd, const std::string& path,
                                        std::string_view what) {
  return OpenBeneath(dir_fd, path, kDirFlags, what);
}

absl::StatusOr<DirChain> WalkDirs(int root_fd, const std::vector<std::string>& dirs, size_t count,
                                  bool create, std::string_view what) {
  DirChain chain;
  chain.fds.reserve(count);
  chain.first_created = count;
  for (size_t i = 0; i < count; ++i) {
    const int parent = chain.Innermost(root_fd);
    if (create) {
      if (::mkdirat(parent, dirs[i].c_str(), 0777) == 0) {
        chain.first_created = std::min(chain.first_created, i);
      } else if (errno != EEXIST) {
        // The created ones stay: empty directories are harmless, and the next delete under
        // them tidies up.
        return PathError(errno, what);
      }
    }
    absl::StatusOr<UniqueFd> fd = OpenDirBeneath(parent, dirs[i], what);
    if (!fd.ok()) {
      return fd.status();
    }
    chain.fds.push_back(*std::move(fd));
  }
  return chain;
}

size_t RemoveEmptyDirs(int root_fd, const std::vector<std::string>& dirs, const DirChain& chain,
                       size_t from) {
  size_t removed = 0;
  for (size_t i = chain.fds.size(); i > from; --i) {
    // A folder marker stays, empty or not: it is an object.
    if (IsFolderMarker(chain.fds[i - 1].get())) {
      break;
    }
    const int parent = chain.ParentOf(i - 1, root_fd);
    if (::unlinkat(parent, dirs[i - 1].c_str(), AT_REMOVEDIR) != 0) {
      break;
    }
    ++removed;
  }
  return removed;
}

absl::Status SyncFd(int fd, std::string_view what) {
  while (::fsync(fd) != 0) {
    if (errno != EINTR) {
      return ErrnoStatus(errno, absl::StrCat("fsync ", std::string(what)));
    }
  }
  return absl::OkStatus();
}

absl::Status RemoveTree(int dir_fd, const std::string& name) {
  // A workload that still has the directory mounted may keep adding to it, or swap a
  // directory for a symlink meanwhile; a few rounds win against anything but a writer that
  // never stops, and each round looks again at what `name` is now.
  for (int attempt = 0; attempt < 5; ++attempt) {
    struct stat st;
    absl::Status status = StatNoFollow(dir_fd, name.c_str(), &st);
    if (absl::IsNotFound(status)) {
      return absl::OkStatus();
    }
    if (!status.ok()) {
      return status;
    }
    if (!S_ISDIR(st.st_mode)) {
      if (::unlinkat(dir_fd, name.c_str(), 0) == 0 || errno == ENOENT) {
        return absl::OkStatus();
      }
      if (errno == EISDIR) {
        continue;
      }
      return ErrnoStatus(errno, "remove");
    }
    absl::StatusOr<UniqueFd> dir = OpenDirBeneath(dir_fd, name, "remove");
    if (absl::IsNotFound(dir.status()) || absl::IsPermissionDenied(dir.status()) ||
        absl::IsFailedPrecondition(dir.status())) {
      continue;  // gone, or no longer a directory: look again
    }
    if (!dir.ok()) {
      return dir.status();
    }
    std::vector<std::string> children;
    status = ReadDir(dir->get(), [&](std::string_view child, EntryType) {
      children.emplace_back(child);
      return true;
    });
    if (!status.ok()) {
      return status;
    }
    for (const std::string& child : children) {
      status = RemoveTree(dir->get(), child);
      if (!status.ok()) {
        return status;
      }
    }
    if (::unlinkat(dir_fd, name.c_str(), AT_REMOVEDIR) == 0 || errno == ENOENT) {
      return absl::OkStatus();
    }
    if (errno != ENOTEMPTY && errno != ENOTDIR) {
      return ErrnoStatus(errno, "remove directory");
    }
  }
  return absl::FailedPreconditionError("remove: the directory keeps being written to");
}

}  // namespace gpuaas::storage::local

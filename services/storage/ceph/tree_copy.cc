#include "services/storage/ceph/tree_copy.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/common/errno_status.h"
#include "libs/common/status_macros.h"
#include "libs/common/unique_fd.h"
#include "services/storage/local/dir_reader.h"

namespace gpuaas::storage::ceph {
namespace {

constexpr size_t kCopyChunk = 1 << 20;

absl::Status CopyFile(int from_dir, int to_dir, const std::string& name, mode_t mode) {
  UniqueFd in(::openat(from_dir, name.c_str(), O_RDONLY | O_NOFOLLOW | O_CLOEXEC));
  if (!in.valid()) return ErrnoStatus(errno, absl::StrCat("restore: open ", name));
  UniqueFd out(::openat(to_dir, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
                        mode & 07777));
  if (!out.valid()) return ErrnoStatus(errno, absl::StrCat("restore: create ", name));
  std::string buffer(kCopyChunk, '\0');
  while (true) {
    const ssize_t n = ::read(in.get(), buffer.data(), buffer.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return ErrnoStatus(errno, absl::StrCat("restore: read ", name));
    if (n == 0) break;
    for (ssize_t done = 0; done < n;) {
      const ssize_t w = ::write(out.get(), buffer.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) return ErrnoStatus(errno, absl::StrCat("restore: write ", name));
      done += w;
    }
  }
  // The mode as stored (the umask applied at create may have cut it).
  if (::fchmod(out.get(), mode & 07777) != 0) {
    return ErrnoStatus(errno, absl::StrCat("restore: chmod ", name));
  }
  if (::fsync(out.get()) != 0) {
    return ErrnoStatus(errno, absl::StrCat("restore: sync ", name));
  }
  return absl::OkStatus();
}

absl::Status CopySymlink(int from_dir, int to_dir, const std::string& name) {
  std::string target(PATH_MAX, '\0');
  const ssize_t n = ::readlinkat(from_dir, name.c_str(), target.data(), target.size());
  if (n < 0) return ErrnoStatus(errno, absl::StrCat("restore: readlink ", name));
  target.resize(static_cast<size_t>(n));
  if (::symlinkat(target.c_str(), to_dir, name.c_str()) != 0) {
    return ErrnoStatus(errno, absl::StrCat("restore: symlink ", name));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status CopyTree(int from_fd, int to_fd) {
  std::vector<std::string> names;
  GPUAAS_RETURN_IF_ERROR(local::ReadDir(from_fd, [&](std::string_view name, local::EntryType) {
    names.emplace_back(name);
    return true;
  }));
  for (const std::string& name : names) {
    struct stat st;
    if (::fstatat(from_fd, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return ErrnoStatus(errno, absl::StrCat("restore: stat ", name));
    }
    if (S_ISREG(st.st_mode)) {
      GPUAAS_RETURN_IF_ERROR(CopyFile(from_fd, to_fd, name, st.st_mode));
    } else if (S_ISLNK(st.st_mode)) {
      GPUAAS_RETURN_IF_ERROR(CopySymlink(from_fd, to_fd, name));
    } else if (S_ISDIR(st.st_mode)) {
      if (::mkdirat(to_fd, name.c_str(), 0700) != 0) {
        return ErrnoStatus(errno, absl::StrCat("restore: mkdir ", name));
      }
      UniqueFd from(
          ::openat(from_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      UniqueFd to(::openat(to_fd, name.c_str(), O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC));
      if (!from.valid() || !to.valid()) {
        return ErrnoStatus(errno, absl::StrCat("restore: open directory ", name));
      }
      GPUAAS_RETURN_IF_ERROR(CopyTree(from.get(), to.get()));
      // Its own mode last, so a read-only directory is filled first.
      if (::fchmod(to.get(), st.st_mode & 07777) != 0) {
        return ErrnoStatus(errno, absl::StrCat("restore: chmod ", name));
      }
    }
    // FIFOs, sockets, devices: nothing an S3 object or a restored storage needs.
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::ceph

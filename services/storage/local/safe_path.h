// Paths resolved beneath a directory fd and never through a symlink: a workload can plant
// symlinks anywhere in the volume it mounts, so every open below a volume's root goes through
// openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS), and directories are
// created one step at a time with mkdirat and re-opened the same way. Nothing here ever reads or
// writes outside the directory it starts from.
//
// Errors name `what` (usually the key): PERMISSION_DENIED when the path meets a symlink or would
// leave the directory, FAILED_PRECONDITION when it passes through a file, NOT_FOUND when a part
// of it does not exist.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "libs/common/errno_status.h"
#include "libs/common/unique_fd.h"

namespace gpuaas::storage::local {

// openat2(dir_fd, path, flags | O_CLOEXEC) beneath dir_fd without following any symlink, the
// last component included ("" opens dir_fd's directory itself). Retries EINTR and EAGAIN.
absl::StatusOr<UniqueFd> OpenBeneath(int dir_fd, const std::string& path, int flags,
                                     std::string_view what);

// OpenBeneath for a directory (O_RDONLY | O_DIRECTORY), usable for *at() calls and fsync.
absl::StatusOr<UniqueFd> OpenDirBeneath(int dir_fd, const std::string& path, std::string_view what);

// The directories leading to a key's leaf, opened one by one from the volume's root:
// fds[i] is the directory named by segments 0..i.
struct DirChain {
  std::vector<UniqueFd> fds;
  // Index of the first directory this walk created; fds.size() when it created none.
  size_t first_created = 0;
  // The innermost directory: the last fd, or `root_fd` for a key without directories.
  int Innermost(int root_fd) const { return fds.empty() ? root_fd : fds.back().get(); }
  // The directory holding fds[i].
  int ParentOf(size_t i, int root_fd) const { return i == 0 ? root_fd : fds[i - 1].get(); }
};

// Walks `dirs` (names, each a valid key segment) below `root_fd`, creating missing ones when
// `create` (mode 0777 less the umask). NOT_FOUND when one is missing and !create.
absl::StatusOr<DirChain> WalkDirs(int root_fd, const std::vector<std::string>& dirs, size_t count,
                                  bool create, std::string_view what);

// Removes the directories of `chain` from index `from` on while they are empty, innermost
// first; returns how many it removed. Stops at the first that is not empty, is a folder marker
// (folder_marker.h) or fails, so a concurrent writer's file is never removed.
size_t RemoveEmptyDirs(int root_fd, const std::vector<std::string>& dirs, const DirChain& chain,
                       size_t from);

// Removes `name` in `dir_fd` and, when it is a directory, everything beneath it, never
// following a symlink (a symlink is removed as itself). Retries a directory that a writer
// still fills a few times. Blocks on disk I/O.
absl::Status RemoveTree(int dir_fd, const std::string& name);

// fsync, retried on EINTR.
absl::Status SyncFd(int fd, std::string_view what);

}  // namespace gpuaas::storage::local

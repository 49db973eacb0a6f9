#include "services/agent/runtime/mount_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuaas::agent {
namespace {

absl::Status Refused(const std::string& path, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("mount source ", path, ": ", why));
}

void Reown(int dirfd, const char* name, const struct stat& st, uid_t uid, gid_t gid) {
  if (st.st_uid != uid) (void)!fchownat(dirfd, name, uid, gid, AT_SYMLINK_NOFOLLOW);
}

// Depth-first with descriptors: a directory swapped for a symlink mid-walk is not entered,
// since each one is opened with O_NOFOLLOW relative to its parent.
void GiveChildrenTo(int dirfd, uid_t uid, gid_t gid, int depth) {
  if (depth > 256) return;
  const int listfd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (listfd < 0) return;
  DIR* dir = fdopendir(listfd);
  if (dir == nullptr) {
    close(listfd);
    return;
  }
  while (const dirent* entry = readdir(dir)) {
    const char* name = entry->d_name;
    if (std::strcmp(name, ".") == 0 || std::strcmp(name, "..") == 0) continue;
    struct stat st;
    if (fstatat(dirfd, name, &st, AT_SYMLINK_NOFOLLOW) != 0) continue;
    Reown(dirfd, name, st, uid, gid);
    if (!S_ISDIR(st.st_mode)) continue;
    const int child = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (child < 0) continue;
    GiveChildrenTo(child, uid, gid, depth + 1);
    close(child);
  }
  closedir(dir);
}

}  // namespace

absl::StatusOr<int> OpenMountSource(const std::string& base, const std::string& sub_path, uid_t uid,
                                    gid_t gid) {
  // The base (the storage service's directory for the storage, named by the storage's
  // identity) is the platform's: trusted, and never made here. Missing, it is a storage deleted
  // since it was attached; making it would mount an empty directory in its place.
  int fd = open(base.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return Refused(base, errno == ENOENT ? "the storage's directory is gone (storage deleted?)"
                                         : std::strerror(errno));
  }
  std::string at = base;
  for (absl::string_view part : absl::StrSplit(sub_path, '/', absl::SkipEmpty())) {
    const std::string name(part);
    at = absl::StrCat(at, "/", name);
    if (name == "." || name == "..") {
      close(fd);
      return Refused(at, "\".\" and \"..\" are not allowed");
    }
    if (mkdirat(fd, name.c_str(), 0755) == 0) {
      if (geteuid() == 0) (void)!fchownat(fd, name.c_str(), uid, gid, AT_SYMLINK_NOFOLLOW);
    } else if (errno != EEXIST) {
      const int err = errno;
      close(fd);
      return Refused(at, absl::StrCat("cannot make it: ", std::strerror(err)));
    }
    const int next = openat(fd, name.c_str(), O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    const int err = errno;
    close(fd);
    if (next < 0) {
      return Refused(at, err == ENOTDIR || err == ELOOP ? "not a directory (a symlink is refused)"
                                                        : std::strerror(err));
    }
    fd = next;
  }
  return fd;
}

void GiveTreeTo(int dirfd, uid_t uid, gid_t gid) {
  struct stat st;
  if (fstatat(dirfd, "", &st, AT_EMPTY_PATH) == 0 && st.st_uid != uid) {
    (void)!fchownat(dirfd, "", uid, gid, AT_EMPTY_PATH);
  }
  GiveChildrenTo(dirfd, uid, gid, 0);
}

}  // namespace gpuaas::agent

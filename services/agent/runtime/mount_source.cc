#include "services/agent/runtime/mount_source.h"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace gpuaas::agent {
namespace {

absl::Status Refused(const std::string& path, const std::string& why) {
  return absl::FailedPreconditionError(absl::StrCat("mount source ", path, ": ", why));
}

// Minimal default ACL (user::rwx group::rwx other::---), as the kernel stores it: what is
// created beneath gets the group's rights from the mode its creator asks for, umask or not.
struct AclEntry {
  uint16_t tag;
  uint16_t perm;
  uint32_t id;
};
struct SharedDefaultAcl {
  uint32_t version = 2;
  AclEntry entries[3] = {{0x01, 7, ~0u}, {0x04, 7, ~0u}, {0x20, 0, ~0u}};
};
constexpr char kDefaultAcl[] = "system.posix_acl_default";

// A directory: the group's, rwx for it, setgid. Anything else: the owner's rights for the
// group too. Nothing for others either way (setuid, setgid and sticky bits go).
mode_t SharedMode(const struct stat& st) {
  const mode_t owner = st.st_mode & S_IRWXU;
  return S_ISDIR(st.st_mode) ? owner | S_IRWXG | S_ISGID : owner | (owner >> 3);
}

// Fixes one object through a descriptor of it (O_PATH is enough), so nothing can be swapped in
// between the look and the change.
void Share(int fd, const struct stat& st, gid_t gid) {
  if (st.st_gid != gid) (void)!fchownat(fd, "", static_cast<uid_t>(-1), gid, AT_EMPTY_PATH);
  if (S_ISLNK(st.st_mode)) return;
  // A change of group clears setgid: set the mode after it, and whenever it was wrong.
  if (st.st_gid != gid || (st.st_mode & 07777) != SharedMode(st)) {
    // fchmod refuses O_PATH descriptors; their /proc link names the very inode.
    (void)!chmod(absl::StrCat("/proc/self/fd/", fd).c_str(), SharedMode(st));
  }
  if (!S_ISDIR(st.st_mode)) return;
  const SharedDefaultAcl want;
  char have[sizeof want + 1];
  const ssize_t n = fgetxattr(fd, kDefaultAcl, have, sizeof have);
  if (n != sizeof want || std::memcmp(have, &want, sizeof want) != 0) {
    (void)!fsetxattr(fd, kDefaultAcl, &want, sizeof want, 0);  // no ACLs here: the umask does it
  }
}

// Depth-first with descriptors: a directory swapped for a symlink mid-walk is not entered,
// since each one is opened with O_NOFOLLOW relative to its parent.
void ShareChildren(int dirfd, gid_t gid, int depth) {
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
    const bool dir_entry = S_ISDIR(st.st_mode);
    if (!dir_entry && st.st_nlink > 1) continue;
    if (!dir_entry && st.st_gid == gid &&
        (S_ISLNK(st.st_mode) || (st.st_mode & 07777) == SharedMode(st))) {
      continue;  // the common case: nothing to open
    }
    const int fd =
        openat(dirfd, name, (dir_entry ? O_RDONLY | O_DIRECTORY : O_PATH) | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) continue;
    // Looked at again through the descriptor: the name may have been replaced meanwhile.
    if (fstat(fd, &st) == 0 && (S_ISDIR(st.st_mode) || st.st_nlink == 1)) {
      Share(fd, st, gid);
      if (S_ISDIR(st.st_mode)) ShareChildren(fd, gid, depth + 1);
    }
    close(fd);
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

void ShareTreeWith(int dirfd, gid_t gid) {
  const int fd = openat(dirfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) return;
  struct stat st;
  if (fstat(fd, &st) == 0) Share(fd, st, gid);
  ShareChildren(fd, gid, 0);
  close(fd);
}

}  // namespace gpuaas::agent

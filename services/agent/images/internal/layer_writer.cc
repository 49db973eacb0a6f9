#include "services/agent/images/internal/layer_writer.h"

#include <archive.h>
#include <archive_entry.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libs/common/status_macros.h"
#include "libs/common/unique_fd.h"

namespace gpuaas::agent {

absl::Status LayerErrnoError(int err, absl::string_view what) {
  if (err == ENOSPC || err == EDQUOT) {
    return absl::ResourceExhaustedError(absl::StrCat("no space: ", what, ": ", strerror(err)));
  }
  return absl::InternalError(absl::StrCat(what, ": ", strerror(err)));
}

namespace {

using Path = std::vector<std::string>;

constexpr absl::string_view kWhiteoutPrefix = ".wh.";
constexpr absl::string_view kOpaqueMarker = ".wh..wh..opq";

absl::Status UnsafeLayer(absl::string_view why, absl::string_view path) {
  return absl::InvalidArgumentError(absl::StrCat("unsafe layer: ", why, ": ", path));
}

// A tar entry's path as clean components; absolute paths and ".." are refused, never rewritten.
absl::StatusOr<Path> CleanPath(const char* raw) {
  if (raw == nullptr) {
    return absl::InvalidArgumentError("unsafe layer: an entry without a path");
  }
  const absl::string_view path(raw);
  if (absl::StartsWith(path, "/")) {
    return UnsafeLayer("absolute path", path);
  }
  Path parts;
  for (absl::string_view part : absl::StrSplit(path, '/', absl::SkipEmpty())) {
    if (part == ".") {
      continue;
    }
    if (part == "..") {
      return UnsafeLayer("path with ..", path);
    }
    parts.emplace_back(part);
  }
  return parts;
}

int OpenBeneath(int dir_fd, const std::string& name, uint64_t flags) {
  open_how how{};
  how.flags = flags | O_CLOEXEC | O_NOFOLLOW;
  how.resolve = RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS | RESOLVE_NO_MAGICLINKS | RESOLVE_NO_XDEV;
  return static_cast<int>(::syscall(SYS_openat2, dir_fd, name.c_str(), &how, sizeof(how)));
}

// Writes one layer's entries under `root_fd`. Every path is resolved one component at a time
// with openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS), so neither a hostile name nor a symlink
// planted by an earlier entry can lead outside.
class LayerWriter final {
 public:
  LayerWriter(int root_fd, LayerBudget& budget) : root_fd_(root_fd), budget_(budget) {}

  absl::Status Write(archive* a, archive_entry* entry) {
    GPUAAS_ASSIGN_OR_RETURN(Path path, CleanPath(archive_entry_pathname(entry)));
    GPUAAS_RETURN_IF_ERROR(budget_.AddEntry(absl::StrJoin(path, "/")));
    if (path.empty()) {  // "./": the layer's root directory itself
      if (archive_entry_filetype(entry) == AE_IFDIR) {
        GPUAAS_RETURN_IF_ERROR(ApplyOwnerModeXattrs(root_fd_, entry, "./"));
        dir_times_.push_back({path, Times(entry)});
      }
      return absl::OkStatus();
    }
    const std::string name = path.back();
    const std::string shown = absl::StrJoin(path, "/");
    GPUAAS_ASSIGN_OR_RETURN(UniqueFd parent, OpenDir(path, path.size() - 1, /*create=*/true));
    if (name == kOpaqueMarker) {
      path.pop_back();
      opaque_dirs_.push_back(std::move(path));
      return absl::OkStatus();
    }
    if (absl::StartsWith(name, kWhiteoutPrefix)) {
      const std::string hidden = name.substr(kWhiteoutPrefix.size());
      if (hidden.empty() || hidden == "." || hidden == "..") {
        return UnsafeLayer("bad whiteout", shown);
      }
      GPUAAS_RETURN_IF_ERROR(RemoveExisting(parent.get(), hidden, shown));
      if (::mknodat(parent.get(), hidden.c_str(), S_IFCHR, makedev(0, 0)) != 0) {
        return LayerErrnoError(errno, absl::StrCat("whiteout ", shown));
      }
      return absl::OkStatus();
    }
    if (const char* target = archive_entry_hardlink(entry); target != nullptr) {
      return WriteHardlink(parent.get(), name, target, shown);
    }
    switch (archive_entry_filetype(entry)) {
      case AE_IFDIR:
        return WriteDir(parent.get(), std::move(path), entry, shown);
      case AE_IFREG:
        return WriteFile(a, parent.get(), name, entry, shown);
      case AE_IFLNK:
        return WriteSymlink(parent.get(), name, entry, shown);
      case AE_IFIFO:
        return WriteFifo(parent.get(), name, entry, shown);
      default:  // device nodes and sockets: a container gets its devices from the runtime
        return absl::OkStatus();
    }
  }

  // Marks the opaque directories and sets directories' mtimes, which their entries changed.
  absl::Status Finish() {
    for (const Path& dir : opaque_dirs_) {
      GPUAAS_ASSIGN_OR_RETURN(UniqueFd fd, OpenDir(dir, dir.size(), /*create=*/true, O_RDONLY));
      if (::fsetxattr(fd.get(), "trusted.overlay.opaque", "y", 1, 0) != 0) {
        return LayerErrnoError(errno, "marking an opaque directory");
      }
    }
    for (auto it = dir_times_.rbegin(); it != dir_times_.rend(); ++it) {
      GPUAAS_ASSIGN_OR_RETURN(UniqueFd fd,
                              OpenDir(it->path, it->path.size(), /*create=*/false, O_RDONLY));
      if (::futimens(fd.get(), it->times.data()) != 0) {
        return LayerErrnoError(errno, "setting a directory's times");
      }
    }
    return absl::OkStatus();
  }

  int64_t size_bytes() const { return size_bytes_; }

 private:
  using TimePair = std::array<timespec, 2>;
  struct DirTimes {
    Path path;
    TimePair times;
  };

  static TimePair Times(archive_entry* entry) {
    const timespec mtime{archive_entry_mtime(entry), archive_entry_mtime_nsec(entry)};
    return {mtime, mtime};
  }

  // The directory at the first `depth` components of `path`, made (0755, root) where missing.
  absl::StatusOr<UniqueFd> OpenDir(const Path& path, size_t depth, bool create,
                                   uint64_t flags = O_PATH) {
    UniqueFd dir(::fcntl(root_fd_, F_DUPFD_CLOEXEC, 0));
    for (size_t i = 0; i < depth; ++i) {
      const uint64_t open_flags = (i + 1 == depth ? flags : O_PATH) | O_DIRECTORY;
      int next = OpenBeneath(dir.get(), path[i], open_flags);
      if (next < 0 && errno == ENOENT && create) {
        if (::mkdirat(dir.get(), path[i].c_str(), 0755) != 0 && errno != EEXIST) {
          return LayerErrnoError(errno, "making a directory");
        }
        next = OpenBeneath(dir.get(), path[i], open_flags);
      }
      if (next < 0) {
        const std::string shown = absl::StrJoin(path.begin(), path.begin() + i + 1, "/");
        if (errno == ELOOP || errno == ENOTDIR || errno == EXDEV) {
          return UnsafeLayer("path through a symlink or a file", shown);
        }
        return LayerErrnoError(errno, absl::StrCat("opening ", shown));
      }
      dir = UniqueFd(next);
    }
    if (depth == 0 && flags != O_PATH) {
      dir = UniqueFd(::openat(root_fd_, ".", flags | O_DIRECTORY | O_CLOEXEC));
    }
    return dir;
  }

  // A later entry replaces an earlier one of the same name (directories merge).
  static absl::Status RemoveExisting(int parent, const std::string& name, absl::string_view shown) {
    struct stat st;
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) != 0) {
      return absl::OkStatus();
    }
    if (S_ISDIR(st.st_mode)) {
      std::error_code error;
      std::filesystem::remove_all(absl::StrCat("/proc/self/fd/", parent, "/", name), error);
      if (error) {
        return LayerErrnoError(error.value(), absl::StrCat("replacing ", shown));
      }
      return absl::OkStatus();
    }
    if (::unlinkat(parent, name.c_str(), 0) != 0) {
      return LayerErrnoError(errno, absl::StrCat("replacing ", shown));
    }
    return absl::OkStatus();
  }

  static absl::Status ApplyOwnerModeXattrs(int fd, archive_entry* entry, absl::string_view shown) {
    if (::fchown(fd, static_cast<uid_t>(archive_entry_uid(entry)),
                 static_cast<gid_t>(archive_entry_gid(entry))) != 0) {
      return LayerErrnoError(errno, absl::StrCat("owning ", shown));
    }
    // After chown, which clears set-id bits.
    if (::fchmod(fd, archive_entry_perm(entry) & 07777) != 0) {
      return LayerErrnoError(errno, absl::StrCat("mode of ", shown));
    }
    archive_entry_xattr_reset(entry);
    const char* name = nullptr;
    const void* value = nullptr;
    size_t size = 0;
    while (archive_entry_xattr_next(entry, &name, &value, &size) == ARCHIVE_OK) {
      // Only what a workload may set itself, and file capabilities; never the trusted.overlay.*
      // attributes that would steer overlayfs (redirects, metacopy) from inside an image.
      const absl::string_view key(name);
      if (!absl::StartsWith(key, "user.") && key != "security.capability") {
        continue;
      }
      if (::fsetxattr(fd, name, value, size, 0) != 0 && errno != ENOTSUP) {
        return LayerErrnoError(errno, absl::StrCat("xattr of ", shown));
      }
    }
    return absl::OkStatus();
  }

  absl::Status WriteDir(int parent, Path path, archive_entry* entry, absl::string_view shown) {
    const std::string& name = path.back();
    struct stat st;
    if (::fstatat(parent, name.c_str(), &st, AT_SYMLINK_NOFOLLOW) == 0 && !S_ISDIR(st.st_mode)) {
      GPUAAS_RETURN_IF_ERROR(RemoveExisting(parent, name, shown));
    }
    if (::mkdirat(parent, name.c_str(), 0700) != 0 && errno != EEXIST) {
      return LayerErrnoError(errno, absl::StrCat("making ", shown));
    }
    UniqueFd dir(OpenBeneath(parent, name, O_RDONLY | O_DIRECTORY));
    if (!dir.valid()) {
      return LayerErrnoError(errno, absl::StrCat("opening ", shown));
    }
    GPUAAS_RETURN_IF_ERROR(ApplyOwnerModeXattrs(dir.get(), entry, shown));
    dir_times_.push_back({std::move(path), Times(entry)});
    return absl::OkStatus();
  }

  absl::Status WriteFile(archive* a, int parent, const std::string& name, archive_entry* entry,
                         absl::string_view shown) {
    GPUAAS_RETURN_IF_ERROR(budget_.AddFile(archive_entry_size(entry), shown));
    GPUAAS_RETURN_IF_ERROR(RemoveExisting(parent, name, shown));
    UniqueFd file(
        ::openat(parent, name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600));
    if (!file.valid()) {
      return LayerErrnoError(errno, absl::StrCat("creating ", shown));
    }
    const void* block = nullptr;
    size_t length = 0;
    la_int64_t offset = 0;
    for (;;) {
      const int r = archive_read_data_block(a, &block, &length, &offset);
      if (r == ARCHIVE_EOF) {
        break;
      }
      if (r < ARCHIVE_WARN) {
        return absl::InvalidArgumentError(
            absl::StrCat("unsafe layer: malformed tar at ", shown, ": ", archive_error_string(a)));
      }
      const char* bytes = static_cast<const char*>(block);
      while (length > 0) {
        const ssize_t n = ::pwrite(file.get(), bytes, length, offset);
        if (n < 0) {
          return LayerErrnoError(errno, absl::StrCat("writing ", shown));
        }
        bytes += n;
        length -= static_cast<size_t>(n);
        offset += n;
        GPUAAS_RETURN_IF_ERROR(budget_.Wrote(n, shown));
      }
    }
    // A sparse file's hole at the end has no block.
    const int64_t size = archive_entry_size(entry);
    if (::ftruncate(file.get(), size) != 0) {
      return LayerErrnoError(errno, absl::StrCat("writing ", shown));
    }
    GPUAAS_RETURN_IF_ERROR(ApplyOwnerModeXattrs(file.get(), entry, shown));
    const TimePair times = Times(entry);
    ::futimens(file.get(), times.data());
    size_bytes_ += size;
    return absl::OkStatus();
  }

  absl::Status WriteHardlink(int parent, const std::string& name, const char* target,
                             absl::string_view shown) {
    GPUAAS_ASSIGN_OR_RETURN(Path target_path, CleanPath(target));
    if (target_path.empty()) {
      return UnsafeLayer("hardlink to the layer's root", shown);
    }
    GPUAAS_ASSIGN_OR_RETURN(UniqueFd target_dir,
                            OpenDir(target_path, target_path.size() - 1, /*create=*/false));
    GPUAAS_RETURN_IF_ERROR(RemoveExisting(parent, name, shown));
    // Without AT_SYMLINK_FOLLOW a link to a symlink links the symlink itself, which stays inside.
    if (::linkat(target_dir.get(), target_path.back().c_str(), parent, name.c_str(), 0) != 0) {
      if (errno == ENOENT || errno == EPERM) {
        return UnsafeLayer("hardlink to nothing earlier in the layer", shown);
      }
      return LayerErrnoError(errno, absl::StrCat("linking ", shown));
    }
    return absl::OkStatus();
  }

  absl::Status WriteSymlink(int parent, const std::string& name, archive_entry* entry,
                            absl::string_view shown) {
    const char* target = archive_entry_symlink(entry);
    if (target == nullptr) {
      return UnsafeLayer("symlink without a target", shown);
    }
    GPUAAS_RETURN_IF_ERROR(RemoveExisting(parent, name, shown));
    // The target is only ever resolved inside the container's root, never by this writer.
    if (::symlinkat(target, parent, name.c_str()) != 0) {
      return LayerErrnoError(errno, absl::StrCat("symlink ", shown));
    }
    const TimePair times = Times(entry);
    if (::fchownat(parent, name.c_str(), static_cast<uid_t>(archive_entry_uid(entry)),
                   static_cast<gid_t>(archive_entry_gid(entry)), AT_SYMLINK_NOFOLLOW) != 0 ||
        ::utimensat(parent, name.c_str(), times.data(), AT_SYMLINK_NOFOLLOW) != 0) {
      return LayerErrnoError(errno, absl::StrCat("symlink ", shown));
    }
    return absl::OkStatus();
  }

  absl::Status WriteFifo(int parent, const std::string& name, archive_entry* entry,
                         absl::string_view shown) {
    GPUAAS_RETURN_IF_ERROR(RemoveExisting(parent, name, shown));
    if (::mknodat(parent, name.c_str(), S_IFIFO | 0600, 0) != 0 ||
        ::fchownat(parent, name.c_str(), static_cast<uid_t>(archive_entry_uid(entry)),
                   static_cast<gid_t>(archive_entry_gid(entry)), AT_SYMLINK_NOFOLLOW) != 0 ||
        ::fchmodat(parent, name.c_str(), archive_entry_perm(entry) & 07777, 0) != 0) {
      return LayerErrnoError(errno, absl::StrCat("fifo ", shown));
    }
    return absl::OkStatus();
  }

  const int root_fd_;
  std::vector<Path> opaque_dirs_;
  std::vector<DirTimes> dir_times_;
  int64_t size_bytes_ = 0;
  LayerBudget& budget_;
};

}  // namespace

absl::StatusOr<int64_t> WriteLayerEntries(archive* a, int root_fd, LayerBudget& budget) {
  LayerWriter writer(root_fd, budget);
  for (;;) {
    archive_entry* entry = nullptr;
    const int r = archive_read_next_header(a, &entry);
    if (r == ARCHIVE_EOF) {
      GPUAAS_RETURN_IF_ERROR(writer.Finish());
      return writer.size_bytes();
    }
    if (r < ARCHIVE_WARN) {
      return absl::InvalidArgumentError(
          absl::StrCat("unsafe layer: malformed tar: ", archive_error_string(a)));
    }
    GPUAAS_RETURN_IF_ERROR(writer.Write(a, entry));
  }
}

}  // namespace gpuaas::agent

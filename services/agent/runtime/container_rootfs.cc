#include "services/agent/runtime/container_rootfs.h"

#include <fcntl.h>
#include <linux/mount.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/common/errno_status.h"
#include "libs/common/status_macros.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;

absl::Status SysError(const std::string& what) { return ErrnoStatus(errno, what); }

// A user namespace that maps [0, count) to [base, base + count), held by a descriptor: what an
// idmapped mount is made with. Its process (a child that only waits to be killed) goes at once;
// the descriptor keeps the namespace.
class IdMapping {
 public:
  static absl::StatusOr<IdMapping> Make(uint32_t base, uint32_t count) {
    int ready[2];
    if (pipe2(ready, O_CLOEXEC) != 0) return SysError("pipe");
    const pid_t pid = fork();
    if (pid < 0) return SysError("fork");
    if (pid == 0) {
      // Only async-signal-safe calls: the agent has threads.
      char b = unshare(CLONE_NEWUSER) == 0 ? 'y' : 'n';
      (void)!write(ready[1], &b, 1);
      for (;;) pause();
    }
    close(ready[1]);
    char b = 'n';
    (void)!read(ready[0], &b, 1);
    close(ready[0]);
    IdMapping m;
    m.pid_ = pid;
    if (b != 'y') return absl::InternalError("cannot make a user namespace (unshare refused)");
    const std::string map = absl::StrCat("0 ", base, " ", count, "\n");
    const std::string proc = absl::StrCat("/proc/", pid);
    for (const char* file : {"/uid_map", "/gid_map"}) {
      std::ofstream out(proc + file);
      out << map;
      out.flush();
      if (!out) return absl::InternalError(absl::StrCat("cannot write ", proc, file));
    }
    m.fd_ = open((proc + "/ns/user").c_str(), O_RDONLY | O_CLOEXEC);
    if (m.fd_ < 0) return SysError("open user namespace");
    return m;
  }
  IdMapping(IdMapping&& o) noexcept : pid_(o.pid_), fd_(o.fd_) { o.pid_ = o.fd_ = -1; }
  ~IdMapping() {
    if (fd_ >= 0) close(fd_);
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  int fd() const { return fd_; }

 private:
  IdMapping() = default;
  pid_t pid_ = -1;
  int fd_ = -1;
};

// Mounts `source` at `target` with its ids shifted by `mapping`.
absl::Status MountIdmapped(const std::string& source, const std::string& target,
                           const IdMapping& mapping) {
  const int tree = static_cast<int>(
      syscall(SYS_open_tree, AT_FDCWD, source.c_str(), OPEN_TREE_CLONE | OPEN_TREE_CLOEXEC));
  if (tree < 0) return SysError(absl::StrCat("open_tree ", source));
  mount_attr attr{};
  attr.attr_set = MOUNT_ATTR_IDMAP | MOUNT_ATTR_NODEV | MOUNT_ATTR_NOSUID;
  attr.userns_fd = static_cast<uint64_t>(mapping.fd());
  absl::Status status;
  if (syscall(SYS_mount_setattr, tree, "", AT_EMPTY_PATH, &attr, sizeof attr) != 0) {
    status = SysError(absl::StrCat("idmap ", source));
  } else if (syscall(SYS_move_mount, tree, "", AT_FDCWD, target.c_str(), MOVE_MOUNT_F_EMPTY_PATH) !=
             0) {
    status = SysError(absl::StrCat("move_mount ", target));
  }
  close(tree);
  return status;
}

absl::Status Run(const std::vector<std::string>& args) {
  const pid_t pid = fork();
  if (pid < 0) return SysError("fork");
  if (pid == 0) {
    const int null = open("/dev/null", O_RDWR);
    dup2(null, 0);
    dup2(null, 1);
    std::vector<char*> argv;
    for (const std::string& a : args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execvp(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InternalError(absl::StrCat(args[0], " failed (status ", status, ")"));
  }
  return absl::OkStatus();
}

// The writable layer's file system: a sparse ext4 image of the limit's size, loop-mounted.
absl::Status MountDisk(const fs::path& dir, int64_t bytes) {
  const fs::path image = dir / "disk.img";
  const fs::path mount = dir / "disk";
  fs::create_directories(mount);
  if (IsMountPoint(mount)) return absl::OkStatus();
  const int fd = open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 || ftruncate(fd, bytes) != 0) {
    if (fd >= 0) close(fd);
    return SysError(absl::StrCat("make ", image.string()));
  }
  close(fd);
  // No journal: nothing in it outlives the container.
  GPUAAS_RETURN_IF_ERROR(Run({"mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-m", "0", "-E",
                              "lazy_itable_init=1,nodiscard", image.string()}));
  return Run({"mount", "-o", "loop,nosuid,nodev", image.string(), mount.string()});
}

}  // namespace

bool NothingMountedUnder(const std::string& dir) {
  std::ifstream in("/proc/self/mountinfo");
  const std::string prefix = fs::path(dir).lexically_normal().string() + "/";
  for (std::string line; std::getline(in, line);) {
    // Field 5 is the mount point (octal escapes aside, which our paths never need).
    std::istringstream fields(line);
    std::string field, point;
    for (int i = 0; i < 5 && fields >> field; ++i) point = field;
    if (point.rfind(prefix, 0) == 0 || point + "/" == prefix) return false;
  }
  return true;
}

// An overlay of `lowers` (top first) at `target`, its upper and work under `writable`/`name`,
// owned by the container's root.
absl::Status MountOverlay(const std::vector<std::string>& lowers, const fs::path& writable,
                          const std::string& name, const fs::path& target, uint32_t id_base) {
  std::error_code ec;
  const fs::path upper = writable / (name + "upper");
  const fs::path work = writable / (name + "work");
  fs::create_directories(upper, ec);
  fs::create_directories(work, ec);
  fs::create_directories(target, ec);
  if (IsMountPoint(target)) return absl::OkStatus();
  if (chown(upper.c_str(), id_base, id_base) != 0) return SysError("chown upper");
  const std::string options =
      absl::StrCat("lowerdir=", absl::StrJoin(lowers, ":"), ",upperdir=", upper.string(),
                   ",workdir=", work.string());
  if (mount("overlay", target.c_str(), "overlay", MS_NOSUID | MS_NODEV, options.c_str()) != 0) {
    return SysError(absl::StrCat("mount overlay at ", target.string()));
  }
  return absl::OkStatus();
}

absl::StatusOr<MountedRootfs> MountRootfs(const RootfsPlan& plan) {
  const fs::path dir = plan.dir;
  MountedRootfs mounted{.rootfs = (dir / "rootfs").string()};
  std::error_code ec;
  if (plan.layer_dirs.empty()) return absl::InvalidArgumentError("the image has no layers");

  fs::path writable = dir;
  if (plan.disk_bytes > 0) {
    GPUAAS_RETURN_IF_ERROR(MountDisk(dir, plan.disk_bytes));
    writable = dir / "disk";
  }
  // The container's root owns its / and /tmp (sticky, for every user in it).
  fs::create_directories(writable / "upper" / "tmp", ec);
  chmod((writable / "upper").c_str(), 0755);
  chmod((writable / "upper" / "tmp").c_str(), 01777);
  if (chown((writable / "upper" / "tmp").c_str(), plan.id_base, plan.id_base) != 0) {
    return SysError("chown upper/tmp");
  }

  GPUAAS_ASSIGN_OR_RETURN(IdMapping mapping, IdMapping::Make(plan.id_base, plan.id_count));
  auto idmapped = [&](const std::string& source, const fs::path& at) -> absl::Status {
    fs::create_directories(at, ec);
    return IsMountPoint(at) ? absl::OkStatus() : MountIdmapped(source, at, mapping);
  };
  std::vector<std::string> lowers;  // top first, as overlayfs wants them
  for (size_t i = 0; i < plan.layer_dirs.size(); ++i) {
    const fs::path lower = dir / "lower" / std::to_string(i);
    GPUAAS_RETURN_IF_ERROR(idmapped(plan.layer_dirs[i], lower));
    lowers.insert(lowers.begin(), lower.string());
  }
  GPUAAS_RETURN_IF_ERROR(MountOverlay(lowers, writable, "", mounted.rootfs, plan.id_base));
  for (size_t i = 0; i < plan.trees.size(); ++i) {
    const fs::path tree = dir / "trees" / std::to_string(i);
    GPUAAS_RETURN_IF_ERROR(idmapped(plan.trees[i], tree / "lower"));
    GPUAAS_RETURN_IF_ERROR(MountOverlay({(tree / "lower").string()}, writable,
                                        absl::StrCat("tree", i, "-"), tree / "merged",
                                        plan.id_base));
    mounted.trees.push_back((tree / "merged").string());
  }
  return mounted;
}

absl::Status UnmountRootfs(const std::string& dir_path) {
  const fs::path dir = dir_path;
  std::error_code ec;
  absl::Status status;
  auto unmount = [&status](const fs::path& path) {
    if (IsMountPoint(path) && umount2(path.c_str(), MNT_DETACH) != 0 && status.ok()) {
      status = SysError(absl::StrCat("umount ", path.string()));
    }
  };
  unmount(dir / "rootfs");
  for (const auto& tree : fs::directory_iterator(dir / "trees", ec)) {
    unmount(tree.path() / "merged");
    unmount(tree.path() / "lower");
  }
  for (const auto& lower : fs::directory_iterator(dir / "lower", ec)) unmount(lower.path());
  // Not detached: the loop device (autoclear) must go before the image is removed.
  if (IsMountPoint(dir / "disk") && umount2((dir / "disk").c_str(), 0) != 0) {
    unmount(dir / "disk");
  }
  if (!status.ok()) return status;
  if (!NothingMountedUnder(dir.string())) {
    return absl::InternalError(absl::StrCat("something is still mounted under ", dir.string()));
  }
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    // Ours only: the directory also holds the workload's record, logs and exit.
    if (name == "rootfs" || name == "lower" || name == "disk" || name == "upper" ||
        name == "work" || name.rfind("tree", 0) == 0) {
      fs::remove_all(entry.path(), ec);
    }
  }
  fs::remove(dir / "disk.img", ec);
  return absl::OkStatus();
}

}  // namespace gpuaas::agent

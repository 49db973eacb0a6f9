#include "services/storage/local/loop_filesystem.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/loop.h>
#include <spawn.h>
#include <sys/ioctl.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "services/storage/local/unique_fd.h"

extern char** environ;

namespace gpuaas::storage::local {
namespace {

namespace fs = std::filesystem;

constexpr char kLoopControl[] = "/dev/loop-control";
constexpr int64_t kBytesPerInode = 16 << 10;  // mke2fs.conf's default inode_ratio
constexpr int64_t kReservedInodes = 16;       // ext4's first inodes, and lost+found

// e2fsprogs live in sbin, which a service's PATH may lack.
std::string FindTool(const char* name) {
  for (const char* dir : {"/usr/sbin", "/sbin", "/usr/bin", "/bin"}) {
    std::string path = absl::StrCat(dir, "/", name);
    if (::access(path.c_str(), X_OK) == 0) {
      return path;
    }
  }
  return "";
}

// Runs a tool to completion; FAILED_PRECONDITION when it fails (its output goes to the log).
absl::Status RunTool(const char* name, std::vector<std::string> args) {
  const std::string path = FindTool(name);
  if (path.empty()) {
    return absl::FailedPreconditionError(absl::StrCat(name, ": not installed (e2fsprogs)"));
  }
  args.insert(args.begin(), path);
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  int out[2];
  if (::pipe2(out, O_CLOEXEC) != 0) {
    return ErrnoStatus(errno, "pipe");
  }
  UniqueFd read_end(out[0]);
  UniqueFd write_end(out[1]);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 1);
  posix_spawn_file_actions_adddup2(&actions, write_end.get(), 2);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, path.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  write_end.Reset();
  if (spawned != 0) {
    return ErrnoStatus(spawned, absl::StrCat("run ", name));
  }
  std::string output;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(read_end.get(), buf, sizeof buf)) != 0) {
    if (n > 0) {
      output.append(buf, static_cast<size_t>(n));
    } else if (errno != EINTR) {
      break;
    }
  }
  int wstatus = 0;
  while (::waitpid(pid, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0) {
    return absl::OkStatus();
  }
  // The output names host paths and devices: for the log, never for a client.
  Logger("storage")->warn("{} failed: {}", name, std::string(absl::StripAsciiWhitespace(output)));
  return absl::FailedPreconditionError(
      absl::StrCat(name, " failed (the storage service's log has its output)"));
}

std::string ReadLine(const fs::path& path) {
  std::string line;
  std::ifstream in(path);
  std::getline(in, line);
  return line;
}

// The loop device already backed by `image` ("/dev/loopN"), or "".
std::string LoopDeviceOf(const std::string& image) {
  std::error_code ec;
  const fs::path target = fs::canonical(image, ec);
  if (ec) {
    return "";
  }
  for (const fs::directory_entry& entry : fs::directory_iterator("/sys/block", ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind("loop", 0) == 0 &&
        ReadLine(entry.path() / "loop" / "backing_file") == target.string()) {
      return absl::StrCat("/dev/", name);
    }
  }
  return "";
}

// The block device a mounted directory lives on ("/dev/loopN").
absl::StatusOr<std::string> DeviceOf(const std::string& mount_point) {
  struct stat st;
  if (::stat(mount_point.c_str(), &st) != 0) {
    return ErrnoStatus(errno, "volume mount point");
  }
  std::error_code ec;
  const fs::path link = fs::read_symlink(
      absl::StrCat("/sys/dev/block/", major(st.st_dev), ":", minor(st.st_dev)), ec);
  if (ec) {
    return absl::FailedPreconditionError("volume mount point: not on a block device");
  }
  return absl::StrCat("/dev/", link.filename().string());
}

// Binds `image` to a free loop device that clears itself when its file system is unmounted.
// The returned fd must stay open until the device is mounted (autoclear fires on last close).
absl::StatusOr<UniqueFd> AttachLoop(const std::string& image, std::string& device) {
  UniqueFd file(::open(image.c_str(), O_RDWR | O_CLOEXEC));
  if (!file.valid()) {
    return ErrnoStatus(errno, "open the volume's image");
  }
  UniqueFd control(::open(kLoopControl, O_RDWR | O_CLOEXEC));
  if (!control.valid()) {
    return ErrnoStatus(errno, kLoopControl);
  }
  // Another process may take the free device between asking and binding: ask again.
  for (int attempt = 0; attempt < 32; ++attempt) {
    const int n = ::ioctl(control.get(), LOOP_CTL_GET_FREE);
    if (n < 0) {
      return ErrnoStatus(errno, "find a free loop device");
    }
    device = absl::StrCat("/dev/loop", n);
    if (::mknod(device.c_str(), S_IFBLK | 0660, makedev(7, n)) != 0 && errno != EEXIST) {
      return ErrnoStatus(errno, "create a loop device");
    }
    UniqueFd loop(::open(device.c_str(), O_RDWR | O_CLOEXEC));
    if (!loop.valid()) {
      return ErrnoStatus(errno, "open a loop device");
    }
    loop_config config{};
    config.fd = static_cast<uint32_t>(file.get());
    config.info.lo_flags = LO_FLAGS_AUTOCLEAR;
    if (::ioctl(loop.get(), LOOP_CONFIGURE, &config) == 0) {
      return loop;
    }
    if (errno != EBUSY) {
      return ErrnoStatus(errno, "bind a loop device");
    }
  }
  return absl::UnavailableError("no free loop device");
}

}  // namespace

absl::Status CheckLoopFilesystemUsable() {
  const std::string use_directory = "; use --volume-filesystem=directory on this machine";
  if (::geteuid() != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("loop-mounted volumes need root (loop devices, mount)", use_directory));
  }
  if (::access(kLoopControl, R_OK | W_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(kLoopControl, " is missing: no loop devices", use_directory));
  }
  for (const char* tool : {"mkfs.ext4", "resize2fs"}) {
    if (FindTool(tool).empty()) {
      return absl::FailedPreconditionError(
          absl::StrCat(tool, " is missing (install e2fsprogs)", use_directory));
    }
  }
  return absl::OkStatus();
}

absl::Status MakeFilesystemImage(const std::string& image, int64_t bytes, int64_t files) {
  {
    UniqueFd file(::open(image.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
    if (!file.valid() || ::ftruncate(file.get(), bytes) != 0) {
      return ErrnoStatus(errno, "create the volume's image");
    }
  }
  // -m 0: no blocks kept for root, the tenant gets the whole size. The journal stays (a crash
  // must not need fsck); for small volumes mke2fs makes it small. Inode tables and journal are
  // left unwritten (a new sparse file reads as zeros), so a 100 GiB volume takes megabytes of
  // disk until it holds data, and mkfs takes milliseconds.
  std::vector<std::string> args = {"-q", "-F", "-m",
                                   "0",  "-E", "nodiscard,lazy_itable_init=1,lazy_journal_init=1"};
  // mke2fs makes an inode per 16 KiB (or 4 KiB on small file systems); a volume allowed more
  // files than that must not run out of inodes first.
  if (files > bytes / kBytesPerInode) {
    args.insert(args.end(), {"-N", std::to_string(files + kReservedInodes)});
  }
  args.push_back(image);
  return RunTool("mkfs.ext4", std::move(args));
}

bool IsMountPoint(const std::string& path) {
  struct stat self, parent;
  return ::stat(path.c_str(), &self) == 0 &&
         ::stat(absl::StrCat(path, "/..").c_str(), &parent) == 0 && self.st_dev != parent.st_dev;
}

absl::Status MountFilesystemImage(const std::string& image, const std::string& mount_point) {
  if (IsMountPoint(mount_point)) {
    return absl::OkStatus();
  }
  std::string device = LoopDeviceOf(image);
  UniqueFd attached;
  if (device.empty()) {
    GPUAAS_ASSIGN_OR_RETURN(attached, AttachLoop(image, device));
  }
  // noinit_itable: the kernel does not zero the inode tables mkfs left unwritten (they read as
  // zeros already); zeroing would make every sparse image as large as its tables.
  if (::mount(device.c_str(), mount_point.c_str(), "ext4", MS_NOSUID | MS_NODEV, "noinit_itable") !=
      0) {
    const int err = errno;
    if (attached.valid()) {
      (void)::ioctl(attached.get(), LOOP_CLR_FD);
    }
    return ErrnoStatus(err, "mount the volume's file system");
  }
  return absl::OkStatus();
}

absl::Status UnmountFilesystem(const std::string& path) {
  if (!IsMountPoint(path)) {
    return absl::OkStatus();
  }
  if (::umount2(path.c_str(), MNT_DETACH) != 0 && errno != EINVAL && errno != ENOENT) {
    return ErrnoStatus(errno, "unmount the volume's file system");
  }
  return absl::OkStatus();
}

absl::Status GrowFilesystemImage(const std::string& image, const std::string& mount_point,
                                 int64_t bytes) {
  struct stat st;
  if (::stat(image.c_str(), &st) != 0) {
    return ErrnoStatus(errno, "the volume's image");
  }
  if (bytes <= st.st_size) {
    return absl::OkStatus();
  }
  GPUAAS_ASSIGN_OR_RETURN(const std::string device, DeviceOf(mount_point));
  if (::truncate(image.c_str(), bytes) != 0) {
    return ErrnoStatus(errno, "grow the volume's image");
  }
  UniqueFd loop(::open(device.c_str(), O_RDONLY | O_CLOEXEC));
  if (!loop.valid() || ::ioctl(loop.get(), LOOP_SET_CAPACITY, 0) != 0) {
    return ErrnoStatus(errno, "grow the volume's loop device");
  }
  absl::Status resized = RunTool("resize2fs", {device});
  if (!resized.ok()) {
    return absl::FailedPreconditionError(absl::StrCat(
        "growing the volume's file system (online, needs CAP_SYS_RESOURCE): ", resized.message()));
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::local

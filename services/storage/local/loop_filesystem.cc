#include "services/storage/local/loop_filesystem.h"

#include <endian.h>
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

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "libs/common/errno_status.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "libs/common/unique_fd.h"

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

// Runs a tool to completion; FAILED_PRECONDITION when it exits above `max_ok_exit` (its output
// goes to the log).
absl::Status RunTool(const char* name, std::vector<std::string> args, int max_ok_exit = 0) {
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
  if (WIFEXITED(wstatus) && WEXITSTATUS(wstatus) <= max_ok_exit) {
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

// Whether this process may resize a mounted ext4 file system (CAP_SYS_RESOURCE); a container's
// root usually may not.
bool MayResizeOnline() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("CapEff:", 0) == 0) {
      return (std::stoull(line.substr(7), nullptr, 16) >> 24 & 1) != 0;  // CAP_SYS_RESOURCE
    }
  }
  return false;
}

struct ImageSizes {
  int64_t image_bytes = 0;
  int64_t filesystem_bytes = 0;
  // What resize2fs may leave unused at the end: a last block group too small for its own
  // metadata (inode table, bitmaps, descriptors) is dropped.
  int64_t slack_bytes = 0;

  // Whether the file system has the size asked for, as far as resize2fs ever makes it.
  bool Fits(int64_t bytes) const { return filesystem_bytes + slack_bytes >= bytes; }
};

// Read from the image's superblock, which both an offline and the kernel's online resize write
// through to the file.
absl::StatusOr<ImageSizes> ReadImageSizes(const std::string& image) {
  UniqueFd file(::open(image.c_str(), O_RDONLY | O_CLOEXEC));
  unsigned char sb[1024];
  struct stat st;
  if (!file.valid() || ::fstat(file.get(), &st) != 0 ||
      ::pread(file.get(), sb, sizeof sb, 1024) != static_cast<ssize_t>(sizeof sb)) {
    return ErrnoStatus(errno, "read the volume's file system");
  }
  auto le = [&](size_t at, size_t width) {
    uint32_t v = 0;
    std::memcpy(&v, sb + at, width);
    return static_cast<uint64_t>(le32toh(v));
  };
  if (le(56, 2) != 0xef53) {
    return absl::FailedPreconditionError("the volume's image holds no ext4 file system");
  }
  const bool is64bit = (le(96, 4) & 0x80) != 0;  // s_feature_incompat: 64bit
  const uint64_t blocks = le(4, 4) | (is64bit ? le(0x150, 4) << 32 : 0);
  const uint64_t block_bytes = uint64_t{1024} << le(24, 4);
  const uint64_t inode_table_blocks = le(40, 4) * le(88, 2) / block_bytes;
  ImageSizes sizes;
  sizes.image_bytes = st.st_size;
  sizes.filesystem_bytes = static_cast<int64_t>(blocks * block_bytes);
  sizes.slack_bytes = static_cast<int64_t>((inode_table_blocks + le(0xce, 2) + 64) * block_bytes);
  return sizes;
}

// Grows the file system of `image`, attached to no loop device, to the image's size. resize2fs
// refuses a file system mounted since its last check, and every volume's is once it has lived
// longer than the second of its mkfs: e2fsck checks it first (exit 1: it fixed something).
absl::Status ResizeDetachedImage(const std::string& image) {
  GPUAAS_RETURN_IF_ERROR(RunTool("e2fsck", {"-f", "-p", image}, /*max_ok_exit=*/1));
  return RunTool("resize2fs", {image});
}

// Waits briefly for the loop device that served `image` to clear itself (autoclear, once the
// last mount of its file system is gone); false when it stays: another mount holds it.
bool LoopReleased(const std::string& image) {
  for (int i = 0; i < 50; ++i) {
    if (LoopDeviceOf(image).empty()) {
      return true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
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
  for (const char* tool : {"mkfs.ext4", "e2fsck", "resize2fs"}) {
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

absl::Status MountFilesystemImage(const std::string& image, const std::string& mount_point) {
  if (IsMountPoint(mount_point)) {
    return absl::OkStatus();
  }
  std::string device = LoopDeviceOf(image);
  UniqueFd attached;
  if (device.empty()) {
    // Nothing uses the file system: finish a growth that had to wait for that. Failing, the
    // volume serves at its old size rather than not at all.
    if (FilesystemGrowthPending(image)) {
      (void)ResizeDetachedImage(image);  // logs the tool's output when failing
    }
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

bool FilesystemGrowthPending(const std::string& image) {
  absl::StatusOr<ImageSizes> sizes = ReadImageSizes(image);
  return sizes.ok() && !sizes->Fits(sizes->image_bytes);
}

absl::StatusOr<bool> GrowFilesystemImage(const std::string& image, const std::string& mount_point,
                                         int64_t bytes, bool may_unmount) {
  GPUAAS_ASSIGN_OR_RETURN(const ImageSizes sizes, ReadImageSizes(image));
  if (sizes.Fits(bytes)) {
    return true;
  }
  const std::string device = LoopDeviceOf(image);
  if (bytes > sizes.image_bytes) {
    if (::truncate(image.c_str(), bytes) != 0) {
      return ErrnoStatus(errno, "grow the volume's image");
    }
    UniqueFd loop(device.empty() ? -1 : ::open(device.c_str(), O_RDONLY | O_CLOEXEC));
    if (loop.valid() && ::ioctl(loop.get(), LOOP_SET_CAPACITY, 0) != 0) {
      return ErrnoStatus(errno, "grow the volume's loop device");
    }
  }
  if (device.empty()) {
    GPUAAS_RETURN_IF_ERROR(ResizeDetachedImage(image));
    return true;
  }
  if (MayResizeOnline()) {
    GPUAAS_RETURN_IF_ERROR(RunTool("resize2fs", {device}));
    return true;
  }
  // Offline instead. Not lazily: a file open on this mount keeps it (EBUSY), and then it is in
  // use.
  if (!may_unmount || ::umount2(mount_point.c_str(), 0) != 0) {
    return false;
  }
  const bool released = LoopReleased(image);
  // Mounting grows the image's file system first when nothing else holds it any more.
  GPUAAS_RETURN_IF_ERROR(MountFilesystemImage(image, mount_point));
  if (!released) {
    return false;
  }
  GPUAAS_ASSIGN_OR_RETURN(const ImageSizes grown, ReadImageSizes(image));
  return grown.Fits(bytes);
}

}  // namespace gpuaas::storage::local

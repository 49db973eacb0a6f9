#include "services/storage/ceph/fuse_mount.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/common/files.h"
#include "libs/common/logging.h"

extern char** environ;

namespace gpuaas::storage::ceph {
namespace {

constexpr char kCephFuse[] = "/usr/bin/ceph-fuse";

// Detaches whatever is mounted on `path`; OK when nothing is.
void Detach(const std::string& path) {
  if (IsMountPoint(path) && ::umount2(path.c_str(), MNT_DETACH) != 0) {
    Logger("storage")->warn("unmounting {}: {}", path, strerror(errno));
  }
}

// Waits up to `timeout` for `pid` to exit; its wait status, or -1 when it still runs.
int WaitExit(pid_t pid, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int wstatus = 0;
    const pid_t r = ::waitpid(pid, &wstatus, WNOHANG);
    if (r == pid) {
      return wstatus;
    }
    if (r < 0 && errno != EINTR) {
      return 0;  // not ours any more
    }
    if (absl::Now() >= deadline) {
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<FuseMount>> FuseMount::Mount(const ClusterOptions& options,
                                                            const std::string& fs_name,
                                                            const std::string& mount_point) {
  if (::access(kCephFuse, X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat(kCephFuse, ": not installed (apt-get install ceph-fuse)"));
  }
  std::error_code ec;
  std::filesystem::create_directories(mount_point, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrCat("ceph mount point ", mount_point, ": ", ec.message()));
  }
  Detach(mount_point);  // a ceph-fuse of a process that died goes once nothing holds its mount
  std::vector<std::string> args = {kCephFuse, "-f", "-c", options.conf_path, "-k",
                                   options.keyring_path, "--id", options.client_id, "--client_fs",
                                   fs_name,
                                   // its own admin socket would collide with librados' in this
                                   // process and with other replicas on the host
                                   "--admin_socket=", mount_point};
  std::vector<char*> argv;
  for (std::string& arg : args) {
    argv.push_back(arg.data());
  }
  argv.push_back(nullptr);
  const std::string log = mount_point + ".log";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = 0;
  const int spawned = ::posix_spawn(&pid, kCephFuse, &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    return absl::FailedPreconditionError(absl::StrCat("run ceph-fuse: ", strerror(spawned)));
  }
  const absl::Time deadline = absl::Now() + options.timeout;
  while (!IsMountPoint(mount_point)) {
    const int exited = WaitExit(pid, absl::Milliseconds(50));
    if (exited >= 0) {
      return absl::FailedPreconditionError(absl::StrCat("ceph-fuse exited (status ", exited,
                                                        ") before mounting ", fs_name, " on ",
                                                        mount_point, "; its output is in ", log));
    }
    if (absl::Now() >= deadline) {
      ::kill(pid, SIGKILL);
      WaitExit(pid, absl::Seconds(5));
      Detach(mount_point);
      return absl::UnavailableError(
          absl::StrCat("ceph-fuse did not mount ", fs_name, " on ", mount_point, " within ",
                       absl::FormatDuration(options.timeout), "; see ", log));
    }
  }
  return std::unique_ptr<FuseMount>(new FuseMount(mount_point, pid));
}

FuseMount::~FuseMount() {
  Detach(path_);
  // ceph-fuse ends its session once the mount is gone; a hung one is not left behind.
  if (WaitExit(pid_, absl::Seconds(10)) < 0) {
    Logger("storage")->warn("ceph-fuse on {} did not exit after unmount; killing it", path_);
    ::kill(pid_, SIGKILL);
    WaitExit(pid_, absl::Seconds(5));
  }
}

}  // namespace gpuaas::storage::ceph

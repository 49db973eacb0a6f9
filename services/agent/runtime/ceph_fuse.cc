#include "services/agent/runtime/ceph_fuse.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

extern char** environ;

namespace gpuaas::agent {
namespace {

// Characters a cephx id, a fs name or a monitor address may hold; anything else (a leading '-',
// a '=' or ',' that ceph's option parser splits on, whitespace) is refused before it reaches a
// command line.
bool PlainToken(const std::string& s, std::string_view extra) {
  if (s.empty() || s[0] == '-') return false;
  for (char c : s) {
    if (!absl::ascii_isalnum(c) && extra.find(c) == std::string_view::npos) return false;
  }
  return true;
}

absl::Status Validate(const CephFuseSource& source, const std::string& key) {
  if (source.monitors.empty()) return absl::InvalidArgumentError("ceph mount: no monitors");
  for (const std::string& m : source.monitors) {
    if (!PlainToken(m, ":.[]/-_,")) {
      return absl::InvalidArgumentError(absl::StrCat("ceph mount: bad monitor address ", m));
    }
  }
  if (!PlainToken(source.fs_name, "-_.")) {
    return absl::InvalidArgumentError("ceph mount: bad fs_name");
  }
  if (!PlainToken(source.client_id, "-_.")) {
    return absl::InvalidArgumentError("ceph mount: bad client_id");
  }
  if (source.path.size() < 2 || source.path[0] != '/' ||
      !PlainToken(source.path.substr(1), "/-_.") || source.path.find("/..") != std::string::npos) {
    return absl::InvalidArgumentError("ceph mount: bad path");
  }
  // The key goes into a keyring file, one line: nothing that would start another line.
  if (!PlainToken(key, "+/=")) return absl::InvalidArgumentError("ceph mount: bad key");
  return absl::OkStatus();
}

// Writes the keyring 0600 from the start (O_EXCL: never into a file someone else made).
absl::Status WriteKeyring(const std::string& path, const std::string& client_id,
                          const std::string& key) {
  ::unlink(path.c_str());
  int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return absl::InternalError(absl::StrCat("creating ", path, ": ", strerror(errno)));
  const std::string text = absl::StrCat("[client.", client_id, "]\n\tkey = ", key, "\n");
  const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
  ::close(fd);
  if (!written) {
    ::unlink(path.c_str());
    return absl::InternalError(absl::StrCat("writing ", path));
  }
  return absl::OkStatus();
}

// Runs argv (no shell) and waits up to timeout_seconds; the exit status, or -1 when it had to be
// killed or could not start.
int Run(const std::vector<std::string>& argv, int timeout_seconds) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(timeout_seconds);
  int status = 0;
  while (true) {
    pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) break;
    if (done < 0 && errno != EINTR) return -1;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

}  // namespace

absl::Status MountCephFuse(const CephFuseSource& source, const std::string& key,
                           const std::string& keyring_dir, const std::string& mountpoint,
                           int timeout_seconds) {
  if (absl::Status valid = Validate(source, key); !valid.ok()) return valid;
  std::error_code ec;
  std::filesystem::create_directories(mountpoint, ec);
  if (ec) return absl::InternalError(absl::StrCat("creating ", mountpoint, ": ", ec.message()));
  const std::string keyring = absl::StrCat(keyring_dir, "/client.", source.client_id, ".keyring");
  if (absl::Status s = WriteKeyring(keyring, source.client_id, key); !s.ok()) return s;
  // --conf /dev/null: the node has no ceph.conf of the cluster's, and needs none. No admin
  // socket and no log file of the client's own: nothing of it is left on the node.
  const int rc = Run({"ceph-fuse", "--conf=/dev/null", "--id", source.client_id,
                      absl::StrCat("--keyring=", keyring),
                      absl::StrCat("--mon_host=", absl::StrJoin(source.monitors, ",")),
                      absl::StrCat("--client_fs=", source.fs_name),
                      // POSIX ACLs, as on a local storage: the runtime shares a storage with the
                      // tenant's group through a default ACL (mount_source.h).
                      "--client_acl_type=posix_acl", "--admin_socket=", "--log_file=/dev/null",
                      "--client_mountpoint", source.path, mountpoint},
                     timeout_seconds);
  ::unlink(keyring.c_str());
  if (rc != 0) {
    std::filesystem::remove(mountpoint, ec);
    return absl::FailedPreconditionError(absl::StrCat("ceph-fuse of ", source.path, " as client.",
                                                      source.client_id, " failed (exit ", rc, ")"));
  }
  return absl::OkStatus();
}

absl::Status UnmountCephFuse(const std::string& mountpoint) {
  if (::umount2(mountpoint.c_str(), MNT_DETACH | UMOUNT_NOFOLLOW) != 0 && errno != EINVAL &&
      errno != ENOENT) {
    // Not root: the FUSE helper may unmount what this user mounted.
    if (errno != EPERM || Run({"fusermount", "-u", "-z", "--", mountpoint}, 30) != 0) {
      return absl::InternalError(absl::StrCat("unmounting ", mountpoint, ": ", strerror(errno)));
    }
  }
  std::error_code ec;
  std::filesystem::remove(mountpoint, ec);
  return absl::OkStatus();
}

}  // namespace gpuaas::agent

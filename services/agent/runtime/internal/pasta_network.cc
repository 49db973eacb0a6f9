#include "services/agent/runtime/internal/pasta_network.h"

#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "libs/common/files.h"
#include "libs/common/status_macros.h"
#include "services/agent/runtime/internal/network_util.h"

namespace gpuaas::agent::network_internal {
namespace {

constexpr int kPastaStartTimeoutMs = 5000;
constexpr int kPastaStopTimeoutMs = 2000;
constexpr int kPrSetMemoryMerge = 67;  // PR_SET_MEMORY_MERGE, newer than Debian 12's headers

std::string UsernsPath(const std::string& dir) { return dir + "/userns"; }
std::string PidPath(const std::string& dir) { return dir + "/pasta.pid"; }
std::string LogPath(const std::string& dir) { return dir + "/pasta.log"; }

// glibc 2.36's <sys/pidfd.h> declares these without C linkage: the system calls themselves.
int PidfdOpen(pid_t pid) { return static_cast<int>(syscall(SYS_pidfd_open, pid, 0)); }
int PidfdSignal(int pidfd, int sig) {
  return static_cast<int>(syscall(SYS_pidfd_send_signal, pidfd, sig, nullptr, 0));
}
// Whether the process behind `pidfd` exits within `timeout_ms`.
bool ExitsWithin(int pidfd, int timeout_ms) {
  pollfd p{pidfd, POLLIN, 0};
  int n;
  do {
    n = poll(&p, 1, timeout_ms);
  } while (n < 0 && errno == EINTR);
  return n > 0;
}

// In a forked child: become `uid` and make a user namespace owned by it with a network namespace
// inside. Reports through `ready` (one byte) and stays until `done` closes. Only async-signal-
// safe calls: the agent is multithreaded.
[[noreturn]] void NamespaceChild(uid_t uid, int ready, int done) {
  const gid_t gid = static_cast<gid_t>(uid);
  const bool made = setgroups(0, nullptr) == 0 && setresgid(gid, gid, gid) == 0 &&
                    setresuid(uid, uid, uid) == 0 && unshare(CLONE_NEWUSER | CLONE_NEWNET) == 0;
  const char byte = made ? 'y' : 'n';
  if (write(ready, &byte, 1) != 1 || !made) _exit(1);
  char ignored;
  while (read(done, &ignored, 1) < 0 && errno == EINTR) {
  }
  _exit(0);
}

// The user namespace (owned by `uid`, which is root inside it) and the network namespace it
// owns, bind-mounted in `dir`. pasta joins both as `uid`; nothing else in it has a capability.
absl::Status MakeNamespaces(const std::string& dir, uid_t uid) {
  int ready[2], done[2];
  if (pipe2(ready, O_CLOEXEC) != 0) return absl::InternalError(Errno("pipe"));
  Fd ready_read(ready[0]), ready_write(ready[1]);
  if (pipe2(done, O_CLOEXEC) != 0) return absl::InternalError(Errno("pipe"));
  Fd done_read(done[0]), done_write(done[1]);

  const pid_t child = fork();
  if (child < 0) return absl::InternalError(Errno("fork"));
  if (child == 0) {
    close(ready[0]);
    close(done[1]);  // or its read would never see the parent close it
    NamespaceChild(uid, ready[1], done[0]);
  }
  ready_write.Reset();
  done_read.Reset();

  absl::Status status;
  char byte = 0;
  if (read(ready_read.get(), &byte, 1) != 1 || byte != 'y') {
    status = absl::InternalError(
        absl::StrFormat("could not make a user and network namespace as uid %d", uid));
  }
  const std::string proc = absl::StrCat("/proc/", child);
  const std::string map = absl::StrFormat("0 %d 1\n", uid);
  if (status.ok()) status = WriteProcFile(proc + "/uid_map", map);
  if (status.ok()) status = WriteProcFile(proc + "/gid_map", map);
  if (status.ok()) status = BindOnto(proc + "/ns/user", UsernsPath(dir));
  if (status.ok()) status = BindOnto(proc + "/ns/net", NetnsPath(dir));
  done_write.Reset();
  while (waitpid(child, nullptr, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// The pasta of `dir` if it runs: its pid from pasta.pid, checked against its command line (which
// names this dir's log), so a stale or forged pid never points at another process.
pid_t RunningPasta(const std::string& dir) {
  absl::StatusOr<std::string> text = ReadFile(PidPath(dir));
  if (!text.ok()) return 0;
  const pid_t pid = static_cast<pid_t>(std::atoi(text->c_str()));
  if (pid <= 0) return 0;
  absl::StatusOr<std::string> cmdline = ReadFile(absl::StrCat("/proc/", pid, "/cmdline"));
  if (!cmdline.ok()) return 0;
  const std::string needle = std::string("\0", 1) + LogPath(dir) + std::string("\0", 1);
  return cmdline->find(needle) == std::string::npos ? 0 : pid;
}

std::string LastLine(const std::string& path) {
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return "no log";
  std::string_view view = *text;
  while (!view.empty() && view.back() == '\n') view.remove_suffix(1);
  const size_t start = view.rfind('\n');
  return std::string(start == std::string_view::npos ? view : view.substr(start + 1));
}

// pasta's arguments. It drops to `uid` before opening the pid file and the namespaces, and the
// workload's directory need not let that uid through: it gets them open, as /proc/self/fd/3-5.
std::vector<std::string> PastaArgs(const NetworkOptions& options, const std::string& dir,
                                   const std::map<int, int>& host_port_to_port, uid_t uid) {
  std::vector<std::string> ports;
  for (const auto& [host_port, port] : host_port_to_port) {
    ports.push_back(absl::StrCat(host_port, ":", port));
  }
  return {options.pasta_path, "--quiet", "--log-file", LogPath(dir), "--runas",
          absl::StrCat(uid, ":", uid), "--pid", "/proc/self/fd/3", "--userns", "/proc/self/fd/4",
          "--netns", "/proc/self/fd/5",
          "--no-netns-quit",  // it would watch /proc/self/fd; Destroy stops it
          "--config-net",
          "--no-map-gw",  // the gateway address is the real gateway, never the node's loopback
          "--no-dhcp", "--no-dhcpv6",
          // Only the declared ports in (the default is every port the workload binds), nothing
          // from the namespace to the node's ports (default: auto), no UDP.
          "--tcp-ports", ports.empty() ? "none" : absl::StrJoin(ports, ","), "--udp-ports", "none",
          "--tcp-ns", "none", "--udp-ns", "none"};
}

// Starts pasta on the namespaces in `dir` and returns once it has daemonized (the ports listen,
// the interface is configured) or failed.
absl::Status StartPasta(const NetworkOptions& options, const std::string& dir,
                        const std::map<int, int>& host_port_to_port, uid_t uid) {
  Fd pid_file(open(PidPath(dir).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (pid_file.get() < 0 || fchown(pid_file.get(), uid, uid) != 0) {
    return absl::InternalError(Errno(absl::StrCat("create ", PidPath(dir))));
  }
  Fd userns(open(UsernsPath(dir).c_str(), O_RDONLY | O_CLOEXEC));
  Fd netns(open(NetnsPath(dir).c_str(), O_RDONLY | O_CLOEXEC));
  Fd null(open("/dev/null", O_RDONLY | O_CLOEXEC));
  // Its standard output and error too: what it says before it opens the log (a bad option).
  Fd log(open(LogPath(dir).c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600));
  if (userns.get() < 0 || netns.get() < 0 || null.get() < 0 || log.get() < 0) {
    return absl::InternalError(Errno(absl::StrCat("open the namespaces and log in ", dir)));
  }
  // Above 5, so the child's dup2 onto 0-5 never overwrites a source.
  constexpr int kFds = 5;
  const int sources[kFds] = {pid_file.get(), userns.get(), netns.get(), null.get(), log.get()};
  int high[kFds];
  Fd lifted[kFds];
  for (int i = 0; i < kFds; ++i) {
    high[i] = fcntl(sources[i], F_DUPFD_CLOEXEC, 6);
    if (high[i] < 0) return absl::InternalError(Errno("dup"));
    lifted[i].Reset(high[i]);
  }
  const std::vector<std::string> args = PastaArgs(options, dir, host_port_to_port, uid);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);

  const pid_t child = fork();
  if (child < 0) return absl::InternalError(Errno("fork"));
  if (child == 0) {
    for (int i = 0; i < 3; ++i) dup2(high[i], 3 + i);
    dup2(high[3], 0);
    dup2(high[4], 1);
    dup2(high[4], 2);
    syscall(SYS_close_range, 6, ~0U, 0);
    // Most of pasta's ~30 MB are buffers it zeroes at start: on a node running KSM (with
    // use_zero_pages) they are shared. Kept across exec; refused harmlessly before Linux 6.4.
    prctl(kPrSetMemoryMerge, 1, 0, 0, 0);
    execv(argv[0], argv.data());
    _exit(127);
  }
  Fd pidfd(PidfdOpen(child));
  if (pidfd.get() >= 0 && !ExitsWithin(pidfd.get(), kPastaStartTimeoutMs)) {
    kill(child, SIGKILL);
  }
  int wstatus = 0;
  while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "pasta (%s) did not start for %s: %s", options.pasta_path, dir, LastLine(LogPath(dir))));
  }
  if (RunningPasta(dir) == 0) {
    return absl::InternalError(absl::StrCat("pasta started but ", PidPath(dir), " names none"));
  }
  return absl::OkStatus();
}

absl::Status StopPasta(const std::string& dir) {
  const pid_t pid = RunningPasta(dir);
  if (pid == 0) return absl::OkStatus();
  Fd pidfd(PidfdOpen(pid));
  if (pidfd.get() < 0) return absl::OkStatus();  // gone meanwhile
  // Checked again through the pidfd: the pid cannot have been reused since it was opened.
  if (RunningPasta(dir) != pid) return absl::OkStatus();
  PidfdSignal(pidfd.get(), SIGTERM);
  if (ExitsWithin(pidfd.get(), kPastaStopTimeoutMs)) return absl::OkStatus();
  PidfdSignal(pidfd.get(), SIGKILL);
  if (ExitsWithin(pidfd.get(), kPastaStopTimeoutMs)) return absl::OkStatus();
  return absl::InternalError(absl::StrFormat("pasta %d of %s does not exit", pid, dir));
}

}  // namespace

absl::Status CreatePastaNetwork(const NetworkOptions& options, const std::string& dir,
                                const std::map<int, int>& host_port_to_port, bool deny_egress) {
  const uid_t uid = deny_egress ? options.no_egress_uid : options.egress_uid;
  const bool namespaces = IsNamespaceMount(NetnsPath(dir)) && IsNamespaceMount(UsernsPath(dir));
  if (namespaces && RunningPasta(dir) != 0) return absl::OkStatus();
  GPUAAS_RETURN_IF_ERROR(CheckHostPortsFree(host_port_to_port));
  if (!namespaces) {
    GPUAAS_RETURN_IF_ERROR(DestroyPastaNetwork(dir));  // a half-made one
    absl::Status made = MakeNamespaces(dir, uid);
    if (!made.ok()) {
      DestroyPastaNetwork(dir).IgnoreError();
      return made;
    }
  }
  absl::Status started = StartPasta(options, dir, host_port_to_port, uid);
  if (!started.ok()) DestroyPastaNetwork(dir).IgnoreError();
  return started;
}

absl::Status DestroyPastaNetwork(const std::string& dir) {
  GPUAAS_RETURN_IF_ERROR(StopPasta(dir));
  GPUAAS_RETURN_IF_ERROR(RemoveMountedFile(NetnsPath(dir)));
  GPUAAS_RETURN_IF_ERROR(RemoveMountedFile(UsernsPath(dir)));
  for (const std::string& path : {PidPath(dir), LogPath(dir)}) {
    if (unlink(path.c_str()) != 0 && errno != ENOENT) {
      return absl::InternalError(Errno(absl::StrCat("remove ", path)));
    }
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::agent::network_internal

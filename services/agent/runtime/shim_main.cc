// gpuaas-workload-shim: the parent of one sandboxed workload, so the workload outlives agent
// restarts. The agent starts it detached; it
//   - records itself in <dir>/shim ("<pid> <start time>", the start time from /proc/<pid>/stat
//     so a recycled pid is never taken for it),
//   - runs bwrap as the workload's user in a process group of its own, with the environment it
//     was given (never on a command line, which every user can read), confined by Landlock to
//     its own ports of --port-range (landlock.h) and with the workload's seccomp filter
//     (seccomp_filter.h) for bwrap to apply once the sandbox is set up,
//   - copies the workload's stdout and stderr into <dir>/stdout.log and stderr.log, each kept
//     under --log-limit bytes (the newest half in .log, the half before in .log.1),
//   - on SIGTERM stops the workload: SIGTERM to its process group, SIGKILL after --grace-ms,
//   - writes <dir>/exit ("<code> <stopped>", code 128+N for signal N) when it is gone.
//
//   gpuaas-workload-shim --dir DIR --bwrap /usr/bin/bwrap --uid 200000 --gid 200000
//       --log-limit 10485760 --grace-ms 10000 --port-range 20000-29999 --own-ports 20004,20007
//       -- BWRAP-ARGS...
//
// With --runc it runs an OCI container instead (the bundle <dir>/bundle, made by the agent):
// `runc create`, then `runc start`. The shim is a child subreaper, so the container's init
// becomes its child once runc create has left; it waits for that init, tells an OOM kill from
// the container's memory cgroup, and `runc delete`s the container before writing <dir>/exit
// ("<code> <stopped> <oom killed>").
//
//   gpuaas-workload-shim --dir DIR --runc /usr/sbin/runc --runc-root ROOT --container ID
//       --log-limit 10485760 --grace-ms 10000
#include <fcntl.h>
#include <grp.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include "services/agent/runtime/landlock.h"
#include "services/agent/runtime/seccomp_filter.h"
#include "services/agent/runtime/shim_files.h"

namespace {

using gpuaas::agent::ShimFiles;

volatile sig_atomic_t g_term = 0;
int g_wake[2] = {-1, -1};

void OnTerm(int) {
  g_term = 1;
  const char b = 't';
  (void)!write(g_wake[1], &b, 1);
}

// Wakes the loop's poll when bwrap exits, so it can block while nothing happens.
void OnChild(int) {
  const int saved = errno;
  const char b = 'c';
  (void)!write(g_wake[1], &b, 1);
  errno = saved;
}

struct Args {
  std::string dir;
  std::string bwrap = "/usr/bin/bwrap";
  uid_t uid = 65534;
  gid_t gid = 65534;
  int64_t log_limit = 10 << 20;
  int grace_ms = 10000;
  gpuaas::agent::PortConfinement ports;  // none without --port-range
  std::vector<std::string> bwrap_args;
  // The container mode: runc, its state directory and the container's id.
  std::string runc;
  std::string runc_root;
  std::string container;
};

bool Parse(int argc, char** argv, Args& a) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    if (arg == "--") {
      for (++i; i < argc; ++i) a.bwrap_args.push_back(argv[i]);
      break;
    }
    const char* v = next();
    if (v == nullptr) return false;
    if (arg == "--dir")
      a.dir = v;
    else if (arg == "--bwrap")
      a.bwrap = v;
    else if (arg == "--uid")
      a.uid = static_cast<uid_t>(std::strtoul(v, nullptr, 10));
    else if (arg == "--gid")
      a.gid = static_cast<gid_t>(std::strtoul(v, nullptr, 10));
    else if (arg == "--log-limit")
      a.log_limit = std::strtoll(v, nullptr, 10);
    else if (arg == "--grace-ms")
      a.grace_ms = std::atoi(v);
    else if (arg == "--runc")
      a.runc = v;
    else if (arg == "--runc-root")
      a.runc_root = v;
    else if (arg == "--container")
      a.container = v;

    else if (arg == "--port-range") {
      if (std::sscanf(v, "%d-%d", &a.ports.first, &a.ports.last) != 2) return false;
    } else if (arg == "--own-ports") {
      for (const char* p = v; *p != '\0';) {
        char* end = nullptr;
        a.ports.own.push_back(static_cast<int>(std::strtol(p, &end, 10)));
        if (end == p) return false;
        p = *end == ',' ? end + 1 : end;
      }
    } else
      return false;
  }
  if (!a.runc.empty()) return !a.dir.empty() && !a.runc_root.empty() && !a.container.empty();
  return !a.dir.empty() && !a.bwrap_args.empty();
}

// One of the workload's output streams, kept under its share of the limit.
class CappedLog {
 public:
  CappedLog(std::string path, int64_t limit) : path_(std::move(path)), half_(limit / 2) {
    fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0640);
    struct stat st;
    if (fd_ >= 0 && fstat(fd_, &st) == 0) size_ = st.st_size;
  }
  ~CappedLog() {
    if (fd_ >= 0) close(fd_);
  }
  void Write(const char* data, ssize_t n) {
    if (fd_ < 0) return;
    if (size_ + n > half_) {
      // Keep the newest: the current half becomes .1, a fresh file takes over.
      close(fd_);
      rename(path_.c_str(), (path_ + ".1").c_str());
      fd_ = open(path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0640);
      size_ = 0;
      if (n > half_) {  // a single write larger than the half keeps its tail
        data += n - half_;
        n = half_;
      }
    }
    if (fd_ >= 0 && write(fd_, data, static_cast<size_t>(n)) == n) size_ += n;
  }

 private:
  std::string path_;
  int64_t half_;
  int fd_ = -1;
  int64_t size_ = 0;
};

bool GroupGone(pid_t pgid) { return kill(-pgid, 0) != 0 && errno == ESRCH; }

int Fail(const Args& a, const std::string& why) {
  std::ofstream(a.dir + "/stderr.log", std::ios::app) << "gpuaas-workload-shim: " << why << "\n";
  ShimFiles(a.dir).WriteExit(127, false);
  return 127;
}

// How the loop acts on the workload: its process group (bwrap) or its container (runc).
struct Control {
  std::function<void()> terminate;  // asks it to stop
  std::function<void()> kill;       // at the grace period's end
  // Reaps what has exited; true once the workload's own process has, with its wait status.
  std::function<bool(int& status)> reap;
  // Whether nothing of it is left once its process is reaped.
  std::function<bool()> gone;
};

struct Outcome {
  int status = 0;
  bool stopping = false;
};

// Copies the workload's output into its capped logs until it is gone, stopping it on SIGTERM
// (terminate, then kill after the grace period).
Outcome Supervise(const Args& a, const ShimFiles& files, int out, int err, const Control& c) {
  CappedLog logs[2] = {CappedLog(a.dir + "/stdout.log", a.log_limit),
                       CappedLog(a.dir + "/stderr.log", a.log_limit)};
  int readers[2] = {out, err};
  bool stopping = false;
  bool killed = false;
  bool reaped = false;
  int status = 0;
  auto deadline = std::chrono::steady_clock::time_point::max();
  char buf[65536];
  for (;;) {
    pollfd fds[3] = {{readers[0], POLLIN, 0}, {readers[1], POLLIN, 0}, {g_wake[0], POLLIN, 0}};
    // Blocks until output, a signal (SIGTERM, SIGCHLD: both write to g_wake) or the grace
    // period's end; only after the workload is reaped does it look for the rest of it.
    int timeout_ms = -1;
    if (reaped) {
      timeout_ms = 50;
    } else if (stopping && !killed) {
      timeout_ms = static_cast<int>(std::max<int64_t>(
          0, std::chrono::duration_cast<std::chrono::milliseconds>(deadline -
                                                                   std::chrono::steady_clock::now())
                     .count() +
                 1));
    }
    poll(fds, 3, timeout_ms);
    for (int i = 0; i < 2; ++i) {
      if (readers[i] < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) continue;
      const ssize_t n = read(readers[i], buf, sizeof buf);
      if (n > 0) {
        logs[i].Write(buf, n);
      } else if (n == 0 || (errno != EINTR && errno != EAGAIN)) {
        close(readers[i]);
        readers[i] = -1;
      }
    }
    if (fds[2].revents & POLLIN) (void)!read(g_wake[0], buf, sizeof buf);
    if (g_term && !stopping) {
      stopping = true;
      files.MarkStopping();
      c.terminate();
      deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(a.grace_ms);
    }
    if (stopping && !killed && std::chrono::steady_clock::now() >= deadline) {
      c.kill();
      killed = true;
    }
    if (!reaped && c.reap(status)) reaped = true;
    if (reaped) {
      // Its process is gone; what it leaves behind must not outlive it.
      if (!stopping) c.kill();
      if (c.gone() && readers[0] < 0 && readers[1] < 0) break;
      if (c.gone()) {  // a pipe may linger in a grandchild that escaped: stop reading
        for (int& r : readers) {
          if (r >= 0) close(r), r = -1;
        }
      }
    }
  }
  return {.status = status, .stopping = stopping};
}

int Code(int status) { return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status); }

// Runs a program to its end with the given stdout and stderr; its wait status, or -1.
int RunToEnd(std::vector<std::string> args, int out, int err) {
  const pid_t pid = fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(out, 1);
    dup2(err, 2);
    std::vector<char*> argv;
    for (std::string& s : args) argv.push_back(s.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  return status;
}

// The file that counts OOM kills in the memory cgroup of `pid` (the container's init, while it
// runs): cgroup v1's memory.oom_control, or v2's memory.events. runc places a relative
// cgroupsPath under the caller's own cgroup, so the path is read, not derived.
std::string OomCountFile(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/cgroup");
  std::string v2;
  for (std::string line; std::getline(in, line);) {
    const size_t colon = line.find(':');
    const size_t second = line.find(':', colon + 1);
    if (colon == std::string::npos || second == std::string::npos) continue;
    const std::string controllers = line.substr(colon + 1, second - colon - 1);
    const std::string path = line.substr(second + 1);
    if (controllers == "memory") return "/sys/fs/cgroup/memory" + path + "/memory.oom_control";
    if (controllers.empty()) v2 = "/sys/fs/cgroup" + path + "/memory.events";
  }
  return v2;
}

bool OomKilled(const std::string& file) {
  std::ifstream in(file);
  std::string key;
  int64_t value = 0;
  while (in >> key >> value) {
    if (key == "oom_kill") return value > 0;
  }
  return false;
}

// What runc wrote before it failed, into the workload's stderr log (the container never ran, so
// nothing else reads the pipe).
// Returns runc's own message (the msg="..." of its last error line), for the exit's reason.
std::string Drain(int fd, const std::string& path) {
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  std::ofstream log(path, std::ios::app);
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) {
    log.write(buf, n);
    text.append(buf, static_cast<size_t>(n));
  }
  const size_t msg = text.rfind("msg=\"");
  if (msg == std::string::npos) return "see the workload's stderr";
  // The message runs to its line's last quote (it holds escaped ones).
  const size_t line_end = text.find('\n', msg);
  const size_t end = text.rfind('"', line_end);
  std::string message = text.substr(msg + 5, end > msg + 5 ? end - msg - 5 : std::string::npos);
  for (size_t i = 0; (i = message.find("\\\"", i)) != std::string::npos;) message.erase(i, 1);
  return message;
}

int RunContainer(const Args& a, const ShimFiles& files, int out[2], int err[2]) {
  // What the agent handed down (the container's host ports, held bound) stays the shim's:
  // nothing it runs inherits them.
  for (int fd = 3; fd < 1024; ++fd) {
    if (fd != out[0] && fd != out[1] && fd != err[0] && fd != err[1] && fd != g_wake[0] &&
        fd != g_wake[1]) {
      const int flags = fcntl(fd, F_GETFD);
      if (flags >= 0) fcntl(fd, F_SETFD, flags | FD_CLOEXEC);
    }
  }
  // The container's init is reparented to the shim once `runc create` leaves it.
  prctl(PR_SET_CHILD_SUBREAPER, 1);
  const std::vector<std::string> runc = {a.runc, "--root", a.runc_root};
  auto with = [&runc](std::initializer_list<std::string> rest) {
    std::vector<std::string> v = runc;
    v.insert(v.end(), rest);
    return v;
  };
  const std::string pid_file = a.dir + "/container.pid";
  // runc's own complaints go to the workload's stderr log: they say why it did not start.
  int status =
      RunToEnd(with({"create", "--bundle", a.dir + "/bundle", "--pid-file", pid_file, a.container}),
               out[1], err[1]);
  if (status != 0) {
    return Fail(a, Drain(err[0], a.dir + "/stderr.log"));
  }
  pid_t init = 0;
  std::ifstream(pid_file) >> init;
  if (init <= 0) return Fail(a, "runc create wrote no pid");
  const int null = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (RunToEnd(with({"start", a.container}), null, err[1]) != 0) {
    RunToEnd(with({"delete", "--force", a.container}), null, null);
    return Fail(a, Drain(err[0], a.dir + "/stderr.log"));
  }
  close(out[1]);
  close(err[1]);
  const std::string oom_file = OomCountFile(init);
  bool init_reaped = false;
  const Control control{.terminate =
                            [&] {
                              // Every process of the container (a shell as init ignores SIGTERM
                              // from outside).
                              RunToEnd(with({"kill", "--all", a.container, "TERM"}), null, null);
                            },
                        .kill = [&] { kill(init, SIGKILL); },  // its PID namespace goes with it
                        .reap =
                            [&](int& st) {
                              for (int s = 0;;) {
                                const pid_t pid = waitpid(-1, &s, WNOHANG);
                                if (pid <= 0) return init_reaped;
                                if (pid == init) {
                                  st = s;
                                  init_reaped = true;
                                }
                              }
                            },
                        .gone = [&] { return init_reaped; }};
  const Outcome outcome = Supervise(a, files, out[0], err[0], control);
  const bool oom = OomKilled(oom_file);
  RunToEnd(with({"delete", "--force", a.container}), null, null);
  files.WriteExit(Code(outcome.status), outcome.stopping, oom && outcome.status != 0);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Args a;
  if (!Parse(argc, argv, a)) {
    std::fprintf(
        stderr,
        "usage: gpuaas-workload-shim --dir DIR [...] -- BWRAP-ARGS\n"
        "       gpuaas-workload-shim --dir DIR --runc RUNC --runc-root ROOT --container ID "
        "[...]\n");
    return 2;
  }
  ShimFiles files(a.dir);
  files.WriteShim(getpid());

  int out[2], err[2];
  if (pipe2(out, O_CLOEXEC) != 0 || pipe2(err, O_CLOEXEC) != 0 ||
      pipe2(g_wake, O_CLOEXEC | O_NONBLOCK) != 0) {
    return Fail(a, std::string("pipe: ") + std::strerror(errno));
  }
  struct sigaction sa {};
  sa.sa_handler = OnTerm;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);
  struct sigaction child_sa {};
  child_sa.sa_handler = OnChild;
  child_sa.sa_flags = SA_NOCLDSTOP;
  sigaction(SIGCHLD, &child_sa, nullptr);
  // The agent starts us with the stop signals blocked: one sent already is handled now.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGTERM);
  sigaddset(&stop, SIGINT);
  sigprocmask(SIG_UNBLOCK, &stop, nullptr);
  if (!a.runc.empty()) return RunContainer(a, files, out, err);

  std::vector<std::string> args = {a.bwrap};
  args.insert(args.end(), a.bwrap_args.begin(), a.bwrap_args.end());
  const pid_t shim = getpid();
  const pid_t child = fork();
  if (child < 0) return Fail(a, std::string("fork: ") + std::strerror(errno));
  if (child == 0) {
    setpgid(0, 0);
    signal(SIGTERM, SIG_DFL);
    signal(SIGINT, SIG_DFL);
    signal(SIGCHLD, SIG_DFL);
    const int null = open("/dev/null", O_RDONLY);
    dup2(null, 0);
    dup2(out[1], 1);
    dup2(err[1], 2);
    if (getuid() == 0) {
      if (setgroups(0, nullptr) != 0 || setgid(a.gid) != 0 || setuid(a.uid) != 0) {
        std::fprintf(stderr, "gpuaas-workload-shim: cannot drop to %u:%u: %s\n", a.uid, a.gid,
                     std::strerror(errno));
        _exit(127);
      }
    }
    // What the workload makes is its group's too (the tenant's: storages are shared through it,
    // mount_source.h), never others'. Where a storage's file system keeps ACLs, its default ACL
    // gives the group its rights whatever umask a program sets.
    umask(007);
    // Dies with the shim from here on (set after the uid change, which clears it), not only
    // once bwrap's --die-with-parent is set: confining takes a while, and a shim killed
    // meanwhile must not leave a sandbox behind.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != shim) _exit(127);
    // Landlock binds this process and all it execs; the seccomp filter only the workload,
    // since bwrap needs mount and unshare first.
    if (const std::string why = gpuaas::agent::ConfineSelf(a.ports); !why.empty()) {
      std::fprintf(stderr, "gpuaas-workload-shim: landlock: %s\n", why.c_str());
      _exit(127);
    }
    std::string why;
    const int filter = gpuaas::agent::WorkloadSeccompFd(why);
    if (filter < 0) {
      std::fprintf(stderr, "gpuaas-workload-shim: seccomp: %s\n", why.c_str());
      _exit(127);
    }
    args.insert(args.begin() + 1, {"--seccomp", std::to_string(filter)});
    std::vector<char*> cargs;
    for (std::string& s : args) cargs.push_back(s.data());
    cargs.push_back(nullptr);
    execv(a.bwrap.c_str(), cargs.data());
    std::fprintf(stderr, "gpuaas-workload-shim: exec %s: %s\n", a.bwrap.c_str(),
                 std::strerror(errno));
    _exit(127);
  }
  setpgid(child, child);  // as the child does: whichever runs first
  close(out[1]);
  close(err[1]);

  const Control control{
      .terminate = [child] { kill(-child, SIGTERM); },
      .kill = [child] { kill(-child, SIGKILL); },
      .reap = [child](int& status) { return waitpid(child, &status, WNOHANG) == child; },
      .gone = [child] { return GroupGone(child); }};
  const Outcome outcome = Supervise(a, files, out[0], err[0], control);
  files.WriteExit(Code(outcome.status), outcome.stopping);
  return 0;
}

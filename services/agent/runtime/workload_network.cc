#include "services/agent/runtime/workload_network.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/magic.h>
#include <netinet/in.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <functional>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libs/common/files.h"
#include "libs/common/status_macros.h"

namespace gpuaas::agent {
namespace {

constexpr char kTable[] = "gpuaas_workload_network";
constexpr int kPastaStartTimeoutMs = 5000;
constexpr int kPastaStopTimeoutMs = 2000;
constexpr int kPrSetMemoryMerge = 67;  // PR_SET_MEMORY_MERGE, newer than Debian 12's headers

std::string UsernsPath(const std::string& dir) { return dir + "/userns"; }
std::string PidPath(const std::string& dir) { return dir + "/pasta.pid"; }
std::string LogPath(const std::string& dir) { return dir + "/pasta.log"; }

std::string Errno(const std::string& what) { return absl::StrCat(what, ": ", strerror(errno)); }

// A file descriptor closed at scope exit.
class Fd final {
 public:
  explicit Fd(int fd = -1) : fd_(fd) {}
  ~Fd() { Reset(); }
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  int get() const { return fd_; }
  void Reset(int fd = -1) {
    if (fd_ >= 0) close(fd_);
    fd_ = fd;
  }

 private:
  int fd_;
};

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

bool IsNamespaceMount(const std::string& path) {
  struct statfs fs;
  return statfs(path.c_str(), &fs) == 0 && fs.f_type == NSFS_MAGIC;
}

// Unmounts every layer at `path` and removes the file; a missing one is fine.
absl::Status RemoveMountedFile(const std::string& path) {
  while (IsNamespaceMount(path)) {
    if (umount2(path.c_str(), MNT_DETACH) != 0) {
      return absl::InternalError(Errno(absl::StrCat("unmount ", path)));
    }
  }
  if (unlink(path.c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(Errno(absl::StrCat("remove ", path)));
  }
  return absl::OkStatus();
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

absl::Status WriteProcFile(const std::string& path, const std::string& text) {
  Fd fd(open(path.c_str(), O_WRONLY | O_CLOEXEC));
  if (fd.get() < 0 || write(fd.get(), text.data(), text.size()) != ssize_t(text.size())) {
    return absl::InternalError(Errno(absl::StrCat("write ", path)));
  }
  return absl::OkStatus();
}

absl::Status BindOnto(const std::string& source, const std::string& target) {
  Fd file(open(target.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0444));
  if (file.get() < 0) return absl::InternalError(Errno(absl::StrCat("create ", target)));
  if (mount(source.c_str(), target.c_str(), nullptr, MS_BIND, nullptr) != 0) {
    return absl::InternalError(Errno(absl::StrCat("bind-mount ", source, " on ", target)));
  }
  return absl::OkStatus();
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

// Whether a TCP listener could take `port` on every address of `family` now.
bool PortFree(int family, int port) {
  Fd fd(socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (fd.get() < 0) return family == AF_INET6;  // a node without IPv6
  const int one = 1;
  setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_storage addr{};
  socklen_t len;
  if (family == AF_INET) {
    auto* v4 = reinterpret_cast<sockaddr_in*>(&addr);
    v4->sin_family = AF_INET;
    v4->sin_port = htons(static_cast<uint16_t>(port));
    len = sizeof *v4;
  } else {
    auto* v6 = reinterpret_cast<sockaddr_in6*>(&addr);
    v6->sin6_family = AF_INET6;
    v6->sin6_port = htons(static_cast<uint16_t>(port));
    setsockopt(fd.get(), IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    len = sizeof *v6;
  }
  return bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), len) == 0;
}

absl::Status CheckPorts(const std::map<int, int>& host_port_to_port) {
  for (const auto& [host_port, port] : host_port_to_port) {
    if (host_port < 1 || host_port > 65535 || port < 1 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "host_port_to_port: %d -> %d is not a pair of ports (1-65535)", host_port, port));
    }
  }
  return absl::OkStatus();
}

// pasta only warns when it cannot bind a host port, so a taken one is found here first.
absl::Status CheckHostPortsFree(const std::map<int, int>& host_port_to_port) {
  for (const auto& [host_port, port] : host_port_to_port) {
    if (!PortFree(AF_INET, host_port) || !PortFree(AF_INET6, host_port)) {
      return absl::FailedPreconditionError(
          absl::StrFormat("host_port_to_port: host port %d is taken", host_port));
    }
  }
  return absl::OkStatus();
}

// Runs `argv` with `input` on its standard input; its exit status must be 0.
absl::Status RunTool(const std::vector<std::string>& args, const std::string& input) {
  int in[2], err[2];
  if (pipe2(in, O_CLOEXEC) != 0) return absl::InternalError(Errno("pipe"));
  Fd in_read(in[0]), in_write(in[1]);
  if (pipe2(err, O_CLOEXEC) != 0) return absl::InternalError(Errno("pipe"));
  Fd err_read(err[0]), err_write(err[1]);
  std::vector<char*> argv;
  for (const std::string& arg : args) argv.push_back(const_cast<char*>(arg.c_str()));
  argv.push_back(nullptr);
  const pid_t child = fork();
  if (child < 0) return absl::InternalError(Errno("fork"));
  if (child == 0) {
    dup2(in[0], 0);
    dup2(err[1], 1);
    dup2(err[1], 2);
    syscall(SYS_close_range, 3, ~0U, 0);  // none of the agent's descriptors
    execv(argv[0], argv.data());
    _exit(127);
  }
  in_read.Reset();
  err_write.Reset();
  // Far below the pipe's buffer: written whole before the tool reads.
  const bool written = write(in_write.get(), input.data(), input.size()) == ssize_t(input.size());
  in_write.Reset();
  std::string output;
  char buf[4096];
  for (ssize_t n; (n = read(err_read.get(), buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    output.append(buf, static_cast<size_t>(n));
  }
  int wstatus = 0;
  while (waitpid(child, &wstatus, 0) < 0 && errno == EINTR) {
  }
  if (!written || !WIFEXITED(wstatus) || WEXITSTATUS(wstatus) != 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s failed: %s", absl::StrJoin(args, " "), output));
  }
  return absl::OkStatus();
}

absl::Status RunNft(const std::string& nft_path, const std::string& rules) {
  return RunTool({nft_path, "-f", "-"}, rules);
}

// pasta's sockets are the workloads' outbound connections: none may start towards the node
// itself (its loopback, any of its addresses, so every service and every host port), and none
// at all for workloads without egress. Connections coming in through a forwarded port are not
// new on pasta's side (their replies are established), so they pass. Refused at once (a TCP
// reset, an ICMP error), not dropped: the workload sees a refusal instead of a timeout.
//
// The veth kind's rules: each workload's host end is gpw<n> (its namespace's end is eth0),
// and what arrives from one is the workload's own traffic. Nothing new from a workload to the
// node (input), nor into a workload but through a declared port (forward, and output for the
// node's own processes); egress masqueraded behind the node, refused for the workloads in
// veth_no_egress; host ports DNATed to the workload's address (veth_ports), from loopback too
// (route_localnet on the host end, the source masqueraded).
std::string NodeRules(const NetworkOptions& options) {
  const std::string pasta =
      absl::StrFormat("meta skuid { %d, %d }", options.egress_uid, options.no_egress_uid);
  const std::string pasta_no_egress = absl::StrFormat("meta skuid %d", options.no_egress_uid);
  const std::string kNew = "ct state { new, untracked }";
  const std::string kLocal = "fib daddr type { local, broadcast, multicast }";
  const std::string kRefuseTcp = "meta l4proto tcp counter reject with tcp reset";
  const std::string kRefuse = "counter reject with icmpx admin-prohibited";
  struct Chain {
    const char* name;
    const char* hook;
    std::vector<std::string> rules;
  };
  const std::vector<Chain> chains = {
      {"output",
       "type filter hook output priority filter; policy accept;",
       {absl::StrJoin({pasta, kNew, kLocal, kRefuseTcp}, " "),
        absl::StrJoin({pasta, kNew, kLocal, kRefuse}, " "),
        absl::StrJoin({pasta_no_egress, kNew, kRefuseTcp}, " "),
        absl::StrJoin({pasta_no_egress, kNew, kRefuse}, " "),
        absl::StrCat("oifname \"gpw*\" ct state new ct status != dnat ", kRefuseTcp),
        absl::StrCat("oifname \"gpw*\" ct state new ct status != dnat ", kRefuse)}},
      {"veth_dnat_in",
       "type nat hook prerouting priority dstnat; policy accept;",
       {"iifname != \"gpw*\" fib daddr type local dnat ip to tcp dport map @veth_ports"}},
      {"veth_dnat_local",
       "type nat hook output priority -100; policy accept;",
       {"fib daddr type local dnat ip to tcp dport map @veth_ports"}},
      {"veth_snat",
       "type nat hook postrouting priority srcnat; policy accept;",
       {"oifname \"gpw*\" ip saddr 127.0.0.0/8 masquerade",
        "iifname \"gpw*\" oifname != \"gpw*\" masquerade"}},
      {"veth_input",
       "type filter hook input priority filter; policy accept;",
       {"iifname \"gpw*\" ct state { established, related } accept",
        absl::StrCat("iifname \"gpw*\" ", kRefuseTcp), absl::StrCat("iifname \"gpw*\" ", kRefuse)}},
      {"veth_forward",
       "type filter hook forward priority filter; policy accept;",
       {"oifname \"gpw*\" ct state { established, related } accept",
        "oifname \"gpw*\" ct status dnat accept", absl::StrCat("oifname \"gpw*\" ", kRefuseTcp),
        absl::StrCat("oifname \"gpw*\" ", kRefuse),
        absl::StrCat("iifname @veth_no_egress ", kRefuseTcp),
        absl::StrCat("iifname @veth_no_egress ", kRefuse)}},
  };
  // Added where missing, each chain flushed and refilled, in one transaction: never a moment
  // without the rules, and the workloads' map and set elements stay (an agent restart).
  std::string text = absl::StrFormat(
      "add table inet %1$s\n"
      "add map inet %1$s veth_ports { type inet_service : ipv4_addr . inet_service; }\n"
      "add set inet %1$s veth_no_egress { type ifname; }\n",
      kTable);
  for (const Chain& chain : chains) {
    absl::StrAppend(&text, "add chain inet ", kTable, " ", chain.name, " { ", chain.hook, " }\n",
                    "flush chain inet ", kTable, " ", chain.name, "\n");
    for (const std::string& rule : chain.rules) {
      absl::StrAppend(&text, "add rule inet ", kTable, " ", chain.name, " ", rule, "\n");
    }
  }
  return text;
}

// ---- The veth kind: no process per workload ----

constexpr int kVethSlots = 16384;  // the /30s of 10.222.0.0/16
constexpr std::string_view kIpPath = "/usr/sbin/ip";
constexpr std::string_view kNftPath = "/usr/sbin/nft";

std::string VethStatePath(const std::string& dir) { return dir + "/veth"; }
std::string HostEnd(int slot) { return absl::StrCat("gpw", slot); }
std::string SlotAddress(int slot, int host) {
  const uint32_t a = (10u << 24) | (222u << 16) | (static_cast<uint32_t>(slot) * 4 + host);
  return absl::StrFormat("%d.%d.%d.%d", a >> 24, (a >> 16) & 255, (a >> 8) & 255, a & 255);
}

struct VethState {
  int slot = -1;
  bool deny_egress = false;
  std::map<int, int> ports;
};

absl::StatusOr<VethState> ReadVethState(const std::string& dir) {
  GPUAAS_ASSIGN_OR_RETURN(std::string text, ReadFile(VethStatePath(dir)));
  VethState state;
  int deny = 0;
  const char* p = text.c_str();
  int used = 0;
  if (sscanf(p, "%d %d\n%n", &state.slot, &deny, &used) != 2) {
    return absl::DataLossError(absl::StrCat(VethStatePath(dir), " is not a veth state"));
  }
  state.deny_egress = deny != 0;
  p += used;
  for (int host_port, port; sscanf(p, "%d %d\n%n", &host_port, &port, &used) == 2; p += used) {
    state.ports[host_port] = port;
  }
  return state;
}

absl::Status WriteVethState(const std::string& dir, const VethState& state) {
  std::string text = absl::StrCat(state.slot, " ", state.deny_egress ? 1 : 0, "\n");
  for (const auto& [host_port, port] : state.ports)
    absl::StrAppend(&text, host_port, " ", port, "\n");
  Fd fd(open(VethStatePath(dir).c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600));
  if (fd.get() < 0 || write(fd.get(), text.data(), text.size()) != ssize_t(text.size())) {
    return absl::InternalError(Errno(absl::StrCat("write ", VethStatePath(dir))));
  }
  return absl::OkStatus();
}

// Runs `f` on a thread of its own moved into the network namespace at `netns` (setns moves
// only the calling thread; what it forks starts there too).
absl::Status InNetns(const std::string& netns, const std::function<absl::Status()>& f) {
  absl::Status status;
  std::thread([&] {
    Fd ns(open(netns.c_str(), O_RDONLY | O_CLOEXEC));
    if (ns.get() < 0 || setns(ns.get(), CLONE_NEWNET) != 0) {
      status = absl::InternalError(Errno(absl::StrCat("join ", netns)));
      return;
    }
    status = f();
  }).join();
  return status;
}

// A network namespace owned by the node's user namespace (a container joining it from its own
// has no capability over it), bind-mounted at NetnsPath(dir).
absl::Status MakeNetns(const std::string& dir) {
  absl::Status status;
  std::thread([&] {
    if (unshare(CLONE_NEWNET) != 0) {
      status = absl::InternalError(Errno("unshare a network namespace"));
      return;
    }
    status = BindOnto("/proc/thread-self/ns/net", NetnsPath(dir));
  }).join();
  return status;
}

bool LinkExists(const std::string& name) {
  struct stat st;
  return stat(absl::StrCat("/sys/class/net/", name).c_str(), &st) == 0;
}

std::string VethElements(const VethState& state) {
  std::vector<std::string> ports;
  for (const auto& [host_port, port] : state.ports) {
    ports.push_back(absl::StrCat(host_port, " : ", SlotAddress(state.slot, 2), " . ", port));
  }
  std::string text;
  if (!ports.empty()) {
    absl::StrAppend(&text, "element inet ", kTable, " veth_ports { ", absl::StrJoin(ports, ", "),
                    " }\n");
  }
  if (state.deny_egress) {
    absl::StrAppend(&text, "element inet ", kTable, " veth_no_egress { \"", HostEnd(state.slot),
                    "\" }\n");
  }
  return text;
}

absl::Status DestroyVeth(const std::string& dir) {
  absl::StatusOr<VethState> state = ReadVethState(dir);
  if (state.ok()) {
    const std::string elements = VethElements(*state);
    if (!elements.empty()) {
      // Each on its own: one already gone must not keep the others.
      for (absl::string_view line : absl::StrSplit(elements, '\n', absl::SkipEmpty())) {
        RunTool({std::string(kNftPath), "-f", "-"}, absl::StrCat("delete ", line, "\n"))
            .IgnoreError();
      }
    }
    if (LinkExists(HostEnd(state->slot))) {
      GPUAAS_RETURN_IF_ERROR(
          RunTool({std::string(kIpPath), "link", "del", HostEnd(state->slot)}, ""));
    }
  }
  GPUAAS_RETURN_IF_ERROR(RemoveMountedFile(NetnsPath(dir)));
  if (unlink(VethStatePath(dir).c_str()) != 0 && errno != ENOENT) {
    return absl::InternalError(Errno(absl::StrCat("remove ", VethStatePath(dir))));
  }
  return absl::OkStatus();
}

absl::Status MakeVeth(const std::string& dir, VethState& state) {
  GPUAAS_RETURN_IF_ERROR(MakeNetns(dir));
  const size_t start = std::hash<std::string>()(dir) % kVethSlots;
  absl::Status linked = absl::ResourceExhaustedError("no free workload link slot");
  for (size_t i = 0; i < 64 && !linked.ok(); ++i) {
    state.slot = static_cast<int>((start + i) % kVethSlots);
    if (LinkExists(HostEnd(state.slot))) continue;
    const std::string host = HostEnd(state.slot);
    linked = RunTool({std::string(kIpPath), "-batch", "-"},
                     absl::StrCat("link add ", host, " type veth peer name eth0 netns ",
                                  NetnsPath(dir), "\naddr add ", SlotAddress(state.slot, 1),
                                  "/30 dev ", host, "\nlink set ", host, " up\n"));
    if (!linked.ok() && linked.message().find("File exists") == std::string_view::npos) {
      return linked;
    }
  }
  GPUAAS_RETURN_IF_ERROR(linked);
  GPUAAS_RETURN_IF_ERROR(WriteVethState(dir, state));
  // The node's loopback DNATed to the workload leaves through this link with 127.0.0.1 as its
  // source until masqueraded; the input chain refuses the workload's own packets to 127/8.
  GPUAAS_RETURN_IF_ERROR(WriteProcFile(
      absl::StrCat("/proc/sys/net/ipv4/conf/", HostEnd(state.slot), "/route_localnet"), "1"));
  GPUAAS_RETURN_IF_ERROR(InNetns(NetnsPath(dir), [&] {
    return RunTool({std::string(kIpPath), "-batch", "-"},
                   absl::StrCat("addr add ", SlotAddress(state.slot, 2),
                                "/30 dev eth0\nlink set eth0 up\nlink set lo up\nroute add "
                                "default via ",
                                SlotAddress(state.slot, 1), "\n"));
  }));
  const std::string elements = VethElements(state);
  if (elements.empty()) return absl::OkStatus();
  return RunTool(
      {std::string(kNftPath), "-f", "-"},
      absl::StrCat("add ",
                   absl::StrJoin(absl::StrSplit(elements, '\n', absl::SkipEmpty()), "\nadd "),
                   "\n"));
}

absl::Status CreateVeth(const std::string& dir, const std::map<int, int>& host_port_to_port,
                        bool deny_egress) {
  absl::StatusOr<VethState> live = ReadVethState(dir);
  if (live.ok() && IsNamespaceMount(NetnsPath(dir)) && LinkExists(HostEnd(live->slot))) {
    return absl::OkStatus();
  }
  GPUAAS_RETURN_IF_ERROR(CheckHostPortsFree(host_port_to_port));
  GPUAAS_RETURN_IF_ERROR(DestroyVeth(dir));  // a half-made one
  VethState state;
  state.deny_egress = deny_egress;
  state.ports = host_port_to_port;
  absl::Status made = MakeVeth(dir, state);
  if (!made.ok()) DestroyVeth(dir).IgnoreError();
  return made;
}

}  // namespace

std::string NetnsPath(const std::string& dir) { return dir + "/netns"; }

absl::Status PrepareNodeNetwork(const NetworkOptions& options) {
  if (options.egress_uid == 0 || options.no_egress_uid == 0 ||
      options.egress_uid == options.no_egress_uid) {
    return absl::InvalidArgumentError(
        absl::StrFormat("egress_uid (%d) and no_egress_uid (%d) must be two distinct non-root ids",
                        options.egress_uid, options.no_egress_uid));
  }
  if (options.kind == NetworkKind::kVeth) {
    // Routing for the workloads' links; the veth chains refuse what involves no workload... no:
    // see the report: a node that did not forward before now forwards between its interfaces.
    GPUAAS_RETURN_IF_ERROR(WriteProcFile("/proc/sys/net/ipv4/ip_forward", "1"));
  }
  struct stat st;
  if (stat("/dev/net/tun", &st) != 0) {
    return absl::FailedPreconditionError(Errno("/dev/net/tun (pasta needs the tun driver)"));
  }
  if ((st.st_mode & 0666) != 0666 && chmod("/dev/net/tun", 0666) != 0) {
    return absl::FailedPreconditionError(Errno("chmod 0666 /dev/net/tun"));
  }
  return RunNft(options.nft_path, NodeRules(options));
}

absl::Status CreateWorkloadNetwork(const NetworkOptions& options, const std::string& dir,
                                   const std::map<int, int>& host_port_to_port, bool deny_egress) {
  GPUAAS_RETURN_IF_ERROR(CheckPorts(host_port_to_port));
  if (options.kind == NetworkKind::kVeth) return CreateVeth(dir, host_port_to_port, deny_egress);
  const uid_t uid = deny_egress ? options.no_egress_uid : options.egress_uid;
  const bool namespaces = IsNamespaceMount(NetnsPath(dir)) && IsNamespaceMount(UsernsPath(dir));
  if (namespaces && RunningPasta(dir) != 0) return absl::OkStatus();
  GPUAAS_RETURN_IF_ERROR(CheckHostPortsFree(host_port_to_port));
  if (!namespaces) {
    GPUAAS_RETURN_IF_ERROR(DestroyWorkloadNetwork(dir));  // a half-made one
    absl::Status made = MakeNamespaces(dir, uid);
    if (!made.ok()) {
      DestroyWorkloadNetwork(dir).IgnoreError();
      return made;
    }
  }
  absl::Status started = StartPasta(options, dir, host_port_to_port, uid);
  if (!started.ok()) DestroyWorkloadNetwork(dir).IgnoreError();
  return started;
}

absl::Status DestroyWorkloadNetwork(const std::string& dir) {
  GPUAAS_RETURN_IF_ERROR(DestroyVeth(dir));
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

}  // namespace gpuaas::agent

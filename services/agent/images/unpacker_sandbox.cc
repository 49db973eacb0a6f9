#include "services/agent/images/unpacker_sandbox.h"

#include <fcntl.h>
#include <grp.h>
#include <linux/capability.h>
#include <linux/landlock.h>
#include <seccomp.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "services/agent/runtime/seccomp_policy.h"

namespace gpuaas::agent {
namespace {

constexpr uid_t kNobody = 65534;

// On top of the workloads' deny list: the unpacker talks to no one, starts nothing and touches
// no other process.
constexpr const char* kAlsoDenied[] = {
    "socket",   "socketpair", "connect",   "bind",      "listen", "accept",
    "accept4",  "execve",     "execveat",  "fork",      "vfork",  "clone",
    "clone3",   "kill",       "tkill",     "setuid",    "setgid", "setreuid",
    "setregid", "setresuid",  "setresgid", "setgroups", "capset", "prctl"};

// The capabilities writing a layer needs: owners and modes from the tar (CHOWN, FOWNER,
// FSETID), directories of any mode (DAC_OVERRIDE, DAC_READ_SEARCH), whiteout devices (MKNOD),
// security.capability xattrs (SETFCAP) and trusted.overlay.opaque (SYS_ADMIN, whose mount and
// namespace calls the filter refuses).
constexpr int kLayerCapabilities[] = {CAP_CHOWN,   CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH,
                                      CAP_FOWNER,  CAP_FSETID,       CAP_MKNOD,
                                      CAP_SETFCAP, CAP_SYS_ADMIN};

std::string Errno(const char* what) { return std::string(what) + ": " + strerror(errno); }

std::string SetLimit(int resource, int64_t value, const char* what) {
  if (value < 0) return "";
  const rlimit limit{static_cast<rlim_t>(value), static_cast<rlim_t>(value)};
  return ::setrlimit(resource, &limit) == 0 ? "" : Errno(what);
}

std::string BecomeNobody(SandboxRole role) {
  if (::geteuid() != 0) return "";  // already unprivileged (a developer's agent)
  if (role != SandboxRole::kParse && ::prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) != 0)
    return Errno("PR_SET_KEEPCAPS");
  if (::setgroups(0, nullptr) != 0) return Errno("setgroups");
  if (::setresgid(kNobody, kNobody, kNobody) != 0) return Errno("setresgid");
  if (::setresuid(kNobody, kNobody, kNobody) != 0) return Errno("setresuid");
  __user_cap_header_struct header{.version = _LINUX_CAPABILITY_VERSION_3, .pid = 0};
  __user_cap_data_struct data[2] = {};
  const auto keep = [&data](int cap) {
    data[cap / 32].effective |= 1u << (cap % 32);
    data[cap / 32].permitted |= 1u << (cap % 32);
  };
  if (role == SandboxRole::kReadFiles) keep(CAP_DAC_READ_SEARCH);
  if (role == SandboxRole::kWriteLayers) {
    for (int cap : kLayerCapabilities) keep(cap);
  }
  if (::syscall(SYS_capset, &header, data) != 0) return Errno("capset");
  return "";
}

// Rights of ABI 3 that Debian 12's headers predate.
constexpr uint64_t kTruncate = 1ULL << 14;

std::string ConfineFiles(const SandboxLimits& limits) {
  const long abi =
      ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
  if (abi < 1) return "";  // no Landlock in this kernel: uid, capabilities and seccomp still hold
  constexpr uint64_t kRead = LANDLOCK_ACCESS_FS_READ_FILE | LANDLOCK_ACCESS_FS_READ_DIR;
  uint64_t write = kRead | LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                   LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                   LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                   LANDLOCK_ACCESS_FS_MAKE_FIFO | LANDLOCK_ACCESS_FS_MAKE_SYM;
  uint64_t handled = write | LANDLOCK_ACCESS_FS_EXECUTE | LANDLOCK_ACCESS_FS_MAKE_SOCK |
                     LANDLOCK_ACCESS_FS_MAKE_BLOCK;
  if (abi >= 2) {  // links and renames between directories: a layer's hardlinks
    handled |= LANDLOCK_ACCESS_FS_REFER;
    write |= LANDLOCK_ACCESS_FS_REFER;
  }
  if (abi >= 3) {
    handled |= kTruncate;
    write |= kTruncate;
  }
  const landlock_ruleset_attr attr{.handled_access_fs = handled};
  const int ruleset =
      static_cast<int>(::syscall(SYS_landlock_create_ruleset, &attr, sizeof(attr), 0));
  if (ruleset < 0) return Errno("landlock_create_ruleset");
  std::string error;
  const auto allow = [&](const std::string& dir, uint64_t access) {
    if (!error.empty()) return;
    const int fd = ::open(dir.c_str(), O_PATH | O_CLOEXEC | O_DIRECTORY);
    if (fd < 0) {
      error = Errno(("landlock: opening " + dir).c_str());
      return;
    }
    const landlock_path_beneath_attr rule{.allowed_access = access, .parent_fd = fd};
    if (::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &rule, 0) != 0) {
      error = Errno(("landlock: a rule for " + dir).c_str());
    }
    ::close(fd);
  };
  for (const std::string& dir : limits.read_beneath) allow(dir, kRead);
  for (const std::string& dir : limits.write_beneath) allow(dir, write);
  if (error.empty() && ::syscall(SYS_landlock_restrict_self, ruleset, 0) != 0) {
    error = Errno("landlock_restrict_self");
  }
  ::close(ruleset);
  return error;
}

std::string LoadFilter() {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) return "seccomp_init failed";
  std::string error;
  const auto deny = [&](const char* name) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR || !error.empty()) return;  // unknown to this libseccomp
    if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(EPERM), nr, 0); rc != 0) {
      error = std::string("seccomp rule for ") + name + ": " + strerror(-rc);
    }
  };
  for (const char* name : kDeniedSyscalls) deny(name);
  for (const char* name : kAlsoDenied) deny(name);
  if (error.empty()) {
    if (int rc = seccomp_load(ctx); rc != 0) error = std::string("seccomp_load: ") + strerror(-rc);
  }
  seccomp_release(ctx);
  return error;
}

}  // namespace

std::string EnterSandbox(const SandboxLimits& limits) {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  // The sanitizers' shadow memory alone is terabytes of address space: the sanitized CI build
  // goes without this one limit.
  constexpr int64_t kAddressSpace = -1;
#else
  const int64_t kAddressSpace = limits.memory_bytes;
#endif
  for (const std::string& error : {SetLimit(RLIMIT_AS, kAddressSpace, "RLIMIT_AS"),
                                   SetLimit(RLIMIT_CPU, limits.cpu_seconds, "RLIMIT_CPU"),
                                   SetLimit(RLIMIT_FSIZE, limits.file_bytes, "RLIMIT_FSIZE"),
                                   SetLimit(RLIMIT_NOFILE, limits.open_files, "RLIMIT_NOFILE"),
                                   SetLimit(RLIMIT_CORE, 0, "RLIMIT_CORE")}) {
    if (!error.empty()) return error;
  }
  // A file past RLIMIT_FSIZE fails its write (EFBIG, a clear error) instead of a silent kill.
  ::signal(SIGXFSZ, SIG_IGN);
  if (limits.deadline_seconds > 0) ::alarm(static_cast<unsigned>(limits.deadline_seconds));
  if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) return Errno("PR_SET_NO_NEW_PRIVS");
  // Before the uid changes: the rules' directories are opened as the agent can.
  if (std::string error = ConfineFiles(limits); !error.empty()) return error;
  if (std::string error = BecomeNobody(limits.role); !error.empty()) return error;
  return LoadFilter();
}

}  // namespace gpuaas::agent

#include "services/agent/images/unpacker_sandbox.h"

#include <grp.h>
#include <linux/capability.h>
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
  for (const std::string& error : {SetLimit(RLIMIT_AS, limits.memory_bytes, "RLIMIT_AS"),
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
  if (std::string error = BecomeNobody(limits.role); !error.empty()) return error;
  return LoadFilter();
}

}  // namespace gpuaas::agent

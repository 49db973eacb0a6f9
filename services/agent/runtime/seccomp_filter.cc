#include "services/agent/runtime/seccomp_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "services/agent/runtime/seccomp_policy.h"

namespace gpuaas::agent {
namespace {

std::string Failed(const char* what, int rc) { return std::string(what) + ": " + strerror(-rc); }

std::string Build(scmp_filter_ctx ctx) {
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  for (const char* name : kDeniedSyscalls) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // unknown to this libseccomp
    if (int rc = seccomp_rule_add(ctx, eperm, nr, 0); rc != 0) return Failed(name, rc);
  }
  for (scmp_datum_t flag : kNamespaceCloneFlags) {
    if (int rc = seccomp_rule_add(ctx, eperm, SCMP_SYS(clone), 1,
                                  SCMP_A0(SCMP_CMP_MASKED_EQ, flag, flag));
        rc != 0) {
      return Failed("clone", rc);
    }
  }
  if (int rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS), SCMP_SYS(clone3), 0); rc != 0) {
    return Failed("clone3", rc);
  }
  return "";
}

}  // namespace

int WorkloadSeccompFd(std::string& error) {
  scmp_filter_ctx ctx = seccomp_init(SCMP_ACT_ALLOW);
  if (ctx == nullptr) {
    error = "seccomp_init failed";
    return -1;
  }
  error = Build(ctx);
  int fd = -1;
  if (error.empty()) {
    fd = memfd_create("gpuaas-seccomp", 0);
    if (fd < 0) {
      error = std::string("memfd_create: ") + strerror(errno);
    } else if (int rc = seccomp_export_bpf(ctx, fd); rc != 0) {
      error = Failed("seccomp_export_bpf", rc);
    } else if (lseek(fd, 0, SEEK_SET) != 0) {
      error = std::string("lseek: ") + strerror(errno);
    }
    if (!error.empty() && fd >= 0) close(fd), fd = -1;
  }
  seccomp_release(ctx);
  return fd;
}

}  // namespace gpuaas::agent

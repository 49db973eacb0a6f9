#include "services/agent/runtime/seccomp_filter.h"

#include <sched.h>
#include <seccomp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuaas::agent {
namespace {

constexpr const char* kDenied[] = {
    // kernel keyrings
    "add_key", "keyctl", "request_key",
    // BPF programs, perf counters, page-fault handlers, io_uring: large, bug-prone interfaces
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register",
    // modules and kexec
    "init_module", "finit_module", "delete_module", "create_module", "query_module",
    "get_kernel_syms", "kexec_load", "kexec_file_load",
    // mounts and namespaces (bwrap set them up before the filter applies)
    "mount", "umount", "umount2", "pivot_root", "chroot", "unshare", "setns", "fsopen", "fsconfig",
    "fsmount", "fspick", "move_mount", "open_tree", "mount_setattr",
    // other processes' memory, descriptors and kernel pointers
    "ptrace", "process_vm_readv", "process_vm_writev", "process_madvise", "pidfd_getfd", "kcmp",
    // file handles reach files outside a bind mount
    "open_by_handle_at", "name_to_handle_at",
    // the machine itself
    "reboot", "swapon", "swapoff", "iopl", "ioperm", "acct", "quotactl", "quotactl_fd",
    "lookup_dcookie", "vm86", "vm86old", "uselib", "ustat", "sysfs", "_sysctl", "nfsservctl",
    "syslog", "settimeofday", "clock_settime", "clock_adjtime", "adjtimex", "fanotify_init",
    "vhangup"};

// Namespace flags clone must not carry.
constexpr scmp_datum_t kNamespaceFlags[] = {CLONE_NEWNS,     CLONE_NEWUTS, CLONE_NEWIPC,
                                            CLONE_NEWUSER,   CLONE_NEWPID, CLONE_NEWNET,
                                            CLONE_NEWCGROUP, CLONE_NEWTIME};

std::string Failed(const char* what, int rc) { return std::string(what) + ": " + strerror(-rc); }

std::string Build(scmp_filter_ctx ctx) {
  const uint32_t eperm = SCMP_ACT_ERRNO(EPERM);
  for (const char* name : kDenied) {
    const int nr = seccomp_syscall_resolve_name(name);
    if (nr == __NR_SCMP_ERROR) continue;  // unknown to this libseccomp
    if (int rc = seccomp_rule_add(ctx, eperm, nr, 0); rc != 0) return Failed(name, rc);
  }
  for (scmp_datum_t flag : kNamespaceFlags) {
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

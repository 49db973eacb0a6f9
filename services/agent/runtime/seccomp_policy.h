// What a workload may not ask of the kernel, whichever runtime confines it: the process runtime
// compiles it into a filter (seccomp_filter.h), the container runtime into its OCI spec
// (oci_spec.h). Everything else is allowed: the filter closes the interfaces an unprivileged
// workload has no use for and that have held kernel bugs, on top of namespaces and no
// capabilities.
#pragma once

#include <sched.h>

#include <cstdint>

namespace gpuaas::agent {

// Refused with EPERM.
inline constexpr const char* kDeniedSyscalls[] = {
    // kernel keyrings
    "add_key", "keyctl", "request_key",
    // BPF programs, perf counters, page-fault handlers, io_uring: large, bug-prone interfaces
    "bpf", "perf_event_open", "userfaultfd", "io_uring_setup", "io_uring_enter",
    "io_uring_register",
    // modules and kexec
    "init_module", "finit_module", "delete_module", "create_module", "query_module",
    "get_kernel_syms", "kexec_load", "kexec_file_load",
    // mounts and namespaces (the runtime set them up before the filter applies)
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

// Namespace flags clone must not carry (EPERM); clone3, whose flags sit in memory a filter
// cannot read, gets ENOSYS so libc falls back to clone.
inline constexpr uint64_t kNamespaceCloneFlags[] = {CLONE_NEWNS,     CLONE_NEWUTS, CLONE_NEWIPC,
                                                    CLONE_NEWUSER,   CLONE_NEWPID, CLONE_NEWNET,
                                                    CLONE_NEWCGROUP, CLONE_NEWTIME};

}  // namespace gpuaas::agent

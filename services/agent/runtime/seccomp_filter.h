// The workload's seccomp filter: system calls a GPU workload never needs and that widen the
// kernel's attack surface fail with EPERM (not a kill, so a program that probes for them goes
// on). Modelled on Docker's default profile, as a deny list: kernel keyrings, BPF, perf,
// userfaultfd, io_uring, module and kexec loading, mounts and namespaces (clone with namespace
// flags too; clone3, whose flags a filter cannot read, says ENOSYS so libc falls back to
// clone), ptrace and cross-process memory access, handles that reach past a bind mount
// (open_by_handle_at), swap, reboot, port I/O, accounting, quotas, clock setting and syslog.
// (personality stays: its odd flags change only the caller's own address space, and
// libseccomp 2.5 cannot compare one argument twice to allow the plain ones.) Calls of another
// architecture (x32, i386 via int 0x80) are killed. bwrap applies it to the workload after its own
// setup (--seccomp FD).
#pragma once

#include <string>

namespace gpuaas::agent {

// The filter as BPF in a memfd (at offset 0, inherited across exec) for bwrap's --seccomp, or
// -1 with `error` set.
int WorkloadSeccompFd(std::string& error);

}  // namespace gpuaas::agent

// How one workload is launched: the bubblewrap arguments around its command, its environment,
// and the host directories bound into it. Pure functions, so what the sandbox lets through is
// readable (and tested) in one place:
//
//   isolated   own mount, PID, IPC and user namespaces; no capabilities; no new user namespaces
//              inside; a read-only /usr and /etc (the system, nothing else of the host's files);
//              a fresh /proc, a minimal /dev, a private /tmp (tmpfs) and home; only its own GPUs'
//              device nodes; its mounts, read-only where asked; an unprivileged uid of its own.
//              The shim adds the seccomp filter (seccomp_filter.h) and Landlock (landlock.h).
//   shared     the host's network (ports are handed out, not namespaced); CPU, memory and disk
//              are not limited (no cgroups yet); GPU isolation is by device nodes and
//              CUDA_VISIBLE_DEVICES only (a time-sliced share sees the whole GPU).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::agent {

// A host directory bound into the sandbox. bwrap binds it as the workload's user, so every
// directory above it must let that user through (process_runtime.cc checks before it starts).
struct BindSource {
  std::string host_path;
  std::string sandbox_path;
  bool read_only = false;
};

struct Launch {
  // bwrap's arguments, without argv[0].
  std::vector<std::string> bwrap_args;
  std::vector<BindSource> binds;  // also in bwrap_args
  // The workload's environment ("NAME=value"), passed through the processes' environment (never
  // their command lines, which every user can read).
  std::vector<std::string> env;
};

// Where the workload's home appears in its sandbox.
inline constexpr char kSandboxHome[] = "/home/workload";

struct LaunchInputs {
  const instance::v1::Workload* workload = nullptr;
  // Template port → host port.
  std::map<int, int> host_ports;
  // The workload's private home on the host.
  std::string home;
  // GPU UUID → its device minor number, for /dev/nvidia<minor> (GpuInfo::minor).
  std::map<std::string, int> gpu_minor;
  // What / holds: each of /bin, /sbin, /lib, /lib32, /lib64 as a symlink target ("usr/bin") or
  // "" for a real directory; missing entries are skipped. From the host at start-up.
  std::map<std::string, std::string> root_links;
  // The workload's mounts as open descriptors (mount_source.h), in the order of its mounts, as
  // bwrap will inherit them; empty: bind each mount's host_path/sub_path by path (tests).
  std::vector<int> mount_fds;
};

Launch BuildLaunch(const LaunchInputs& in);

// root_links for this host.
std::map<std::string, std::string> ReadRootLinks();

}  // namespace gpuaas::agent

// The node's runtime. A workload with an image runs as an OCI container (runc, under the same
// shim; container_launch.h): pulled (PULLING, with progress) and prepared on a thread of its
// own, so a slow pull holds up no other start. A workload without one runs the process way:
// a host process tree sandboxed with bubblewrap (own
// mount, PID and IPC namespaces; a read-only system; a private home and /tmp; only its mounts
// and its GPUs' device nodes; a seccomp filter; Landlock), run as an unprivileged uid of its
// own, under a small shim process that outlives the agent, keeps its size-capped logs and
// records its exit. State lives in one directory per workload under `root`, so a new runtime
// adopts what an old one started.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/agent/runtime/container_launch.h"
#include "services/agent/runtime/runtime.h"

namespace gpuaas::agent {

struct ProcessRuntimeOptions {
  // One directory per workload (its state, home and logs); created if missing, mode 0700.
  std::string root;
  // The gpuaas-workload-shim binary.
  std::string shim_path;
  // bubblewrap.
  std::string bwrap_path = "/usr/bin/bwrap";
  // Whom workloads run as when the agent runs as root (a user name or uid) and no uid range is
  // given; an agent that is not root runs them as itself. Never root.
  std::string workload_user = "nobody";
  // When the agent runs as root, each workload runs as a uid (and gid) of its own from
  // [first_uid, last_uid], kept in its directory's `uid` file (so an adopted workload keeps it)
  // and free again once the directory is removed. 0-0: all run as workload_user.
  uid_t first_uid = 0;
  uid_t last_uid = 0;
  // With a uid range, each tenant's workloads run in a group of the tenant's own from
  // [first_gid, last_gid] (kept in the root's `tenant-gids`, tenant_groups.h), which owns the
  // storages they write, so all of a tenant's workloads share its storages. Must not overlap the
  // uid range. 0-0: each workload's group is its uid's, and a storage is the group's of the
  // last workload that mounted it writable.
  gid_t first_gid = 0;
  gid_t last_gid = 0;
  // Refuse to start when the kernel cannot confine workloads' ports and scope their sockets and
  // signals (Landlock ABI 6, landlock.h); otherwise such a kernel only gets a warning.
  bool require_landlock = false;
  // Host ports handed to template ports: [first, last].
  int first_port = 20000;
  int last_port = 29999;
  // Each of stdout and stderr keeps at most this much (the newest).
  int64_t log_limit_bytes = 10 << 20;
  // GPU UUID → its device minor number, for /dev/nvidia<minor> (GpuInfo::minor).
  std::map<std::string, int> gpu_minor;
  // How often probes run while a workload is STARTED.
  absl::Duration probe_interval = absl::Milliseconds(100);
  // Workloads with an image_reference run as OCI containers (container_launch.h) when
  // containers.images is set; otherwise they fail to start.
  ContainerOptions containers;
};

// Makes the runtime and adopts the workloads found under options.root. Errors:
// FAILED_PRECONDITION when bwrap or the shim is missing, the workload user is root, or Landlock
// is required and missing; INVALID_ARGUMENT for a bad port, uid or gid range.
absl::StatusOr<std::unique_ptr<Runtime>> NewProcessRuntime(ProcessRuntimeOptions options);

}  // namespace gpuaas::agent

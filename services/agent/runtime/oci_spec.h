// A workload's OCI runtime spec (config.json): pure, so what a container is let through is
// readable (and tested) in one place:
//
//   isolated   its own user namespace (container ids 0-65535 are a host block of its own, so its
//              root is nobody on the node), PID, IPC, UTS, mount and cgroup namespaces; the
//              network namespace made for it (workload_network.h); no capabilities at all; no
//              new privileges; the seccomp policy (seccomp_policy.h); /proc and /sys paths
//              masked or read-only as OCI runtimes do by default; only its GPUs' device nodes
//              and the driver's libraries (gpu_injection.h); its storage mounts.
//   limited    CPU (quota per 100 ms), memory (no swap beyond it; more is an OOM kill), pids,
//              open files; its writable layer and /tmp by the size of the file system under
//              them (container_rootfs.h).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "nlohmann/json_fwd.hpp"

namespace gpuaas::agent {

// What the image says to run, from its config.
struct ImageProcess {
  std::vector<std::string> env;  // "NAME=value"
  std::vector<std::string> entrypoint;
  std::vector<std::string> cmd;
  std::string working_dir;
  // The image's User: "uid" or "uid:gid", numbers inside the container's user namespace (0 to
  // 65535); a name, or nothing, runs as 0 (which is no more than any other id: the container
  // holds no capability). An sshd image needs a user that is not 0 (sshd as 0 would chroot).
  std::string user;
};

// A host path bound into the container.
struct ContainerBind {
  std::string host_path;
  std::string container_path;
  bool read_only = true;
};

// A device node bound from the host (a user namespace cannot mknod) and allowed by the device
// cgroup.
struct ContainerDevice {
  std::string host_path;
  std::string container_path;
  char type = 'c';
  int64_t major = 0;
  int64_t minor = 0;
};

// Where the tenant's group (tenant_groups.h) appears inside: storages are shared through it.
inline constexpr uint32_t kContainerTenantGid = 70000;

struct ContainerSpecInputs {
  const instance::v1::Workload* workload = nullptr;
  ImageProcess image;
  std::string rootfs;
  // Host id of the container's 0; ids 0 to id_count-1 map to [id_base, id_base + id_count).
  uint32_t id_base = 0;
  uint32_t id_count = 65536;
  // The tenant's host group, mapped to kContainerTenantGid; 0: none.
  gid_t tenant_gid = 0;
  std::string netns_path;
  std::vector<ContainerBind> binds;
  std::vector<ContainerDevice> devices;
  // The runtime's variables (GPUAAS_*, the GPUs'), after the image's and the workload's.
  std::vector<std::string> env;
  // The most open files the node can give (the agent's own hard limit: raising it takes
  // CAP_SYS_RESOURCE); 0: no ceiling.
  int64_t open_files_ceiling = 0;
};

// config.json for runc. INVALID_ARGUMENT when there is nothing to run (no cmd in the workload,
// no entrypoint or cmd in the image).
absl::StatusOr<nlohmann::json> BuildOciSpec(const ContainerSpecInputs& in);

}  // namespace gpuaas::agent

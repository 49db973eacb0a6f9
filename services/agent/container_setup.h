// The agent's container parts, joined for the runtime (container_launch.h): its image store
// (images/image_store.h) with a check that a tenant may use an image another tenant's pull left
// in the node's cache, the workloads' networks (runtime/workload_network.h) and GPU injection
// (runtime/gpu_injection.h) from the node's driver or a simulated node's fake one.
#pragma once

#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libs/registry_policy/registry_policy.h"
#include "services/agent/gpu_source.h"
#include "services/agent/images/image_store.h"
#include "services/agent/runtime/container_launch.h"
#include "services/agent/runtime/gpu_injection.h"
#include "services/agent/runtime/workload_network.h"

namespace gpuaas::agent {

struct ContainerSetup {
  std::string image_root;
  int64_t image_cache_bytes = 50LL << 30;
  // Which registries pulls may reach, and which without verified TLS.
  registry::RegistryPolicy registries;
  absl::Duration pull_timeout = absl::Minutes(30);
  std::string unpacker_path;  // gpuaas-image-unpacker
  int64_t unpacker_memory_bytes = 2LL << 30;
  UnpackLimits unpack_limits;
  // Networks in the node's LAN ranges that workloads with egress may reach (PrepareNodeNetwork).
  std::vector<std::string> lan_allowed;
  // Where workload ports are forwarded (the advertised address) and the proxies' sources, the
  // only ones a private port accepts (workload_network.h's PortAccess).
  std::string forward_address = "127.0.0.1";
  std::vector<std::string> proxy_sources = {"127.0.0.1"};
  // Where the workloads' directories are (their networks' forwards are moved, if they predate
  // the binding to an address); empty: none.
  std::string workload_root;
  // Where the driver is and how MIG instances are found.
  GpuHost gpu_host;
  std::shared_ptr<const MigResolver> mig;
  std::map<std::string, int> gpu_minor;
};

// Opens the image store and prepares the node's network rules. The store is returned too, for
// garbage collection.
absl::StatusOr<ContainerOptions> MakeContainerOptions(const ContainerSetup& setup,
                                                      std::shared_ptr<ImageStore>* store);

// The images workloads under `workload_root` were started from (their `image` files): what
// garbage collection must keep.
std::set<std::string> ImagesInUse(const std::string& workload_root);

// Ends every container under `workload_root` at once, whatever state its shim is in (tests and
// the dev stack's teardown, after the agent is gone): runc deletes it, its network goes, and
// nothing stays mounted under the root. The directories stay.
void ForceEndContainers(const std::string& workload_root, const std::string& runc_path);

}  // namespace gpuaas::agent

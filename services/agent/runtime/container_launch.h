// What a container workload needs before its shim can `runc create` it: its image pulled, its
// root file system mounted, its network namespace, its storage mounts and GPUs, and the bundle's
// config.json (oci_spec.h); and taking all of it down again once it has ended.
//
// The node's parts come in through small interfaces (the agent wires the image store,
// workload networks and GPU injection; tests may wire a local image), so this file only joins
// them.
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "services/agent/runtime/oci_spec.h"

namespace gpuaas::agent {

// Host ids per container: its user namespace maps 0-65535 onto a block of its own.
inline constexpr uint32_t kContainerIds = 65536;

// An image ready to stack: its layers unpacked on this node, bottom first.
struct ContainerImage {
  std::string digest;
  std::vector<std::string> layer_dirs;
  ImageProcess process;
  // Host directories the image is made of besides its layers (the node's system image): bound
  // read-only (binds), or stacked under a writable layer (trees: container path → host path).
  std::vector<ContainerBind> binds;
  std::map<std::string, std::string> trees;
};

// What a workload without an image runs from: the node's own /usr (under a writable layer of
// the container's: what it writes stays its own) and /etc (read-only, and as the node's root
// owns it: /etc/shadow stays unreadable) over an empty root of the usual shape (bin, lib, ...
// linked into usr as on the node). Made once under the runtime's root.
absl::StatusOr<ContainerImage> NodeSystemImage(const std::string& runtime_root);

class ContainerImages {
 public:
  virtual ~ContainerImages() = default;
  // Pulls workload.image_reference (with its registry_credentials), reporting progress for
  // people; a cached image returns at once. Errors name why (not found, unauthorized, digest
  // mismatch, no space).
  virtual absl::StatusOr<ContainerImage> Pull(
      const instance::v1::Workload& workload,
      const std::function<void(const std::string& progress)>& progress) = 0;
};

class ContainerNetworks {
 public:
  virtual ~ContainerNetworks() = default;
  // A network namespace for the workload in `dir` forwarding each host port to its port (those
  // in `public_host_ports` from anyone, the others from the proxies only: workload_network.h);
  // returns the namespace's path.
  virtual absl::StatusOr<std::string> Create(const std::string& dir,
                                             const std::map<int, int>& host_port_to_port,
                                             const std::set<int>& public_host_ports,
                                             bool deny_egress) = 0;
  virtual absl::Status Destroy(const std::string& dir) = 0;
};

// The workload's GPUs as the NVIDIA container toolkit injects them.
struct ContainerGpus {
  std::vector<ContainerDevice> devices;
  std::vector<ContainerBind> binds;
  std::vector<std::string> env;
};
using GpuInjector = std::function<absl::StatusOr<ContainerGpus>(const instance::v1::Workload&)>;

struct ContainerOptions {
  std::string runc_path = "/usr/sbin/runc";
  std::shared_ptr<ContainerImages> images;
  // Null: each container gets an empty network namespace of its own (loopback only).
  std::shared_ptr<ContainerNetworks> networks;
  // Null: no GPU is injected (a workload that has GPUs fails to start).
  GpuInjector gpus;
  // Workloads without an image run as containers too, from NodeSystemImage; otherwise they run
  // the process runtime's way (bubblewrap).
  bool system_image_workloads = true;
  // Where the node itself reaches its containers' host ports (the readiness probes): they are
  // forwarded at the advertised address alone, which on a node of its own is not loopback.
  std::string probe_address = "127.0.0.1";
  // Container id blocks of 65536 host ids each, from first_id on: one per running container.
  uint32_t first_id = 1u << 20;
  uint32_t id_blocks = 4096;
};

struct ContainerLaunch {
  const instance::v1::Workload* workload = nullptr;
  std::string dir;
  std::map<int, int> host_ports;  // template port → host port
  uint32_t id_base = 0;
  gid_t tenant_gid = 0;  // 0: none
  std::function<void(const std::string& progress)> progress;
};

// Where runc keeps its state, under the runtime's root.
std::string RuncRoot(const std::string& runtime_root);

struct PreparedContainer {
  // The shim's arguments for it (after --dir).
  std::vector<std::string> shim_args;
};

// Pulls, mounts and writes the bundle. On a failed pull, *pull_failed is set (the workload is
// then FAILED IMAGE_PULL_FAILED rather than START_ERROR).
absl::StatusOr<PreparedContainer> PrepareContainer(const ContainerOptions& options,
                                                   const std::string& runtime_root,
                                                   const ContainerLaunch& launch,
                                                   bool* pull_failed);

// Takes down what PrepareContainer made in `dir` (mounts, network). Idempotent. Until it
// returns OK, the directory must not be removed: it holds mounts of shared layers.
absl::Status ReleaseContainer(const ContainerOptions& options, const std::string& dir);

}  // namespace gpuaas::agent

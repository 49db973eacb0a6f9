// What a container needs to use its GPUs, as the NVIDIA container toolkit injects them (its CDI
// specs for the compute and utility capabilities): the device nodes of its GPUs (or of its MIG
// instance, with the /dev/nvidia-caps nodes that grant the GPU and compute instance), the
// driver's shared control nodes, the driver's user-space libraries and tools bound read-only,
// and the environment CUDA reads. Pure data: the OCI spec builder turns it into config.json
// entries (devices, mounts, env).
//
// Where the libraries go: the toolkit binds them at the host's paths and runs the image's
// ldconfig. We cannot run programs of a tenant's image as root, so each library is bound into
// kContainerDriverLibDir, which the loader searches through LD_LIBRARY_PATH (NVIDIA's CUDA
// images already list it there); no file of the image is shadowed and every distribution's
// layout works. The tools go to /usr/bin, where every image's PATH looks.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace gpuaas::agent {

inline constexpr absl::string_view kContainerDriverLibDir = "/usr/local/nvidia/lib64";
inline constexpr absl::string_view kContainerDriverBinDir = "/usr/bin";

// A device node the container gets. In a user namespace runc cannot mknod: it bind-mounts the
// node from the host, so the spec builder binds `host_path` at `path` and allows
// type:major:minor in the device cgroup.
struct DeviceNode {
  std::string path;       // inside the container: /dev/nvidia0
  std::string host_path;  // the node on this host (under GpuHost.dev_dir)
  char type = 'c';
  int64_t major = 0;
  int64_t minor = 0;
  uint32_t file_mode = 0666;  // the host node's permission bits
};

struct HostBind {
  std::string host_path;  // a regular file, symlinks resolved
  std::string container_path;
  bool read_only = true;
};

struct GpuInjection {
  // /dev/nvidia<minor> of its GPUs only, /dev/nvidiactl, /dev/nvidia-uvm,
  // /dev/nvidia-uvm-tools (when the host has it), and for MIG the parent GPU's node plus
  // /dev/nvidia-caps/nvidia-cap<N> of its GPU instance and compute instance.
  std::vector<DeviceNode> devices;
  // Every name of each driver library (libcuda.so, libcuda.so.1, libcuda.so.<version>) in
  // kContainerDriverLibDir, and the driver's tools in kContainerDriverBinDir.
  std::vector<HostBind> binds;
  // "NAME=value": NVIDIA_VISIBLE_DEVICES, CUDA_VISIBLE_DEVICES (GPU or MIG UUIDs),
  // NVIDIA_DRIVER_CAPABILITIES and LD_LIBRARY_PATH (see MergeGpuEnv).
  std::vector<std::string> env;
};

// Where a node's driver is: the real one (FindHostGpuDriver, host_gpu_driver.h) or a fake on a
// simulated node (PrepareSimulatedDriver, simulated_gpu_driver.h).
struct GpuHost {
  std::string dev_dir = "/dev";
  std::vector<std::string> library_dirs;  // searched in order, as the loader does
  std::vector<std::string> binary_dirs = {"/usr/bin"};
  // Holds devices ("nvidia-caps" major) and driver/nvidia-caps/mig-minors
  // ("gpu<minor>/gi<G>/ci<C>/access <N>" lines: the caps node of each instance).
  std::string proc_dir = "/proc";
};

// A MIG device: one compute instance of one GPU instance.
struct MigDevice {
  uint32_t gpu_instance_id = 0;
  uint32_t compute_instance_id = 0;
  std::string uuid;  // "MIG-..."
};

// Finds the MIG device of a partition: NVML on GPU nodes (NvmlGpuSource), a fixed layout on
// simulated ones (SimulatedMigResolver). Thread-safe.
class MigResolver {
 public:
  virtual ~MigResolver() = default;

  // The MIG device of GPU `gpu_uuid` whose GPU instance starts at memory slice `start_slice`
  // (no two instances of a GPU start at the same slice); `profile` ("3g.40gb") names it in
  // errors. Blocks on the driver. Errors: NOT_FOUND when the GPU or the instance is not
  // there; FAILED_PRECONDITION when the driver cannot say, or the instance has several
  // compute instances.
  virtual absl::StatusOr<MigDevice> FindMigDevice(const std::string& gpu_uuid,
                                                  absl::string_view profile,
                                                  int start_slice) const = 0;
};

// What a container holding `gpu_uuids` (and, when `mig_partition` is set, "<profile>@<start
// slice>" of its one GPU, as instance.v1.Workload has it) needs. `gpu_minor` maps the node's
// GPU UUIDs to their /dev/nvidia<minor>; `mig` may be null when no partition is asked for. No
// GPUs: no devices or binds, NVIDIA_VISIBLE_DEVICES=void. Reads the host's files; blocks on
// disk and, for MIG, on the driver.
// Errors: NOT_FOUND for a GPU that is not on this node or a MIG instance that is not there;
// INVALID_ARGUMENT for a malformed mig_partition or one with other than one GPU;
// FAILED_PRECONDITION naming what of the driver is missing (a device node, libcuda.so.1,
// libnvidia-ml.so.1, a mig-minors entry).
absl::StatusOr<GpuInjection> InjectGpus(const GpuHost& host,
                                        const std::vector<std::string>& gpu_uuids,
                                        const std::map<std::string, int>& gpu_minor,
                                        const std::string& mig_partition, const MigResolver* mig);

// `image_env` ("NAME=value", as the image's config has it) with the injection's variables:
// they replace the image's, except LD_LIBRARY_PATH, where ours comes first and the image's
// follows.
std::vector<std::string> MergeGpuEnv(std::vector<std::string> image_env,
                                     const GpuInjection& injection);

}  // namespace gpuaas::agent

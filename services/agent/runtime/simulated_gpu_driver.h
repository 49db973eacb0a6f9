// A fake NVIDIA driver for simulated GPU nodes (--simulate-gpus), so containers there get GPUs
// by the same code as on GPU nodes (InjectGpus): device nodes that behave as /dev/null under
// the driver's names, a fake libcuda and libnvidia-ml under their sonames, and the /proc files
// the MIG caps are numbered from. MIG partitions resolve to a fixed layout: GPU instance =
// start slice, compute instance 0, a MIG UUID derived from the GPU's UUID and the partition.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "services/agent/gpu_source.h"
#include "services/agent/runtime/gpu_injection.h"

namespace gpuaas::agent {

// The fake driver's version, in its libraries' file names (libcuda.so.<version>).
inline constexpr absl::string_view kSimulatedDriverVersion = "550.0.0";

// The fake libraries to install: paths of shared objects.
struct SimulatedDriverLibraries {
  std::string libcuda;
  std::string libnvidia_ml;
};

// The fakes the build puts next to gpuaas-agent, in `dir` (its directory).
SimulatedDriverLibraries FakeDriverLibrariesIn(const std::string& dir);

// Makes the fake driver of `gpus` under `dir` (created if missing; a previous one is replaced,
// so containers still running keep the files they bound) and returns where it is. Needs
// CAP_MKNOD. Blocks on disk. Errors: FAILED_PRECONDITION naming the file that could not be
// made or the fake library that could not be read.
absl::StatusOr<GpuHost> PrepareSimulatedDriver(const std::string& dir,
                                               const std::vector<GpuInfo>& gpus,
                                               const SimulatedDriverLibraries& libraries);

class SimulatedMigResolver final : public MigResolver {
 public:
  explicit SimulatedMigResolver(std::vector<GpuInfo> gpus);

  // NOT_FOUND for a GPU not in `gpus` or a start slice outside 0..7.
  absl::StatusOr<MigDevice> FindMigDevice(const std::string& gpu_uuid, absl::string_view profile,
                                          int start_slice) const override;

 private:
  std::vector<GpuInfo> gpus_;
};

}  // namespace gpuaas::agent

// GPUs through NVML, loaded at run time with dlopen (no NVIDIA headers or libraries at build
// time: internal/nvml_api.h declares what we call). XID errors arrive through an NVML event set
// registered for nvmlEventTypeXidCriticalError on every GPU that supports it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/agent/gpu_source.h"
#include "services/agent/runtime/gpu_injection.h"

namespace gpuaas::agent {

// The library a GPU host's driver installs.
inline constexpr char kDefaultNvmlLibrary[] = "libnvidia-ml.so.1";

// Also resolves MIG partitions for GPU injection (MigResolver): that needs only the loaded
// library, not the discovered state, so it may run on any thread.
class NvmlGpuSource final : public GpuSource, public MigResolver {
 public:
  // Loads `library` (a file name the dynamic loader searches for, or a path), resolves every
  // function we call and initialises NVML. Blocks on the loader and the driver.
  // Errors: FAILED_PRECONDITION naming the library and what failed (not found, a function
  // missing, nvmlInit_v2 refused with NVML's message).
  static absl::StatusOr<std::unique_ptr<NvmlGpuSource>> Open(const std::string& library);

  // Frees the event set, shuts NVML down and unloads the library.
  ~NvmlGpuSource() override;

  absl::StatusOr<std::vector<GpuInfo>> Discover() override;
  absl::StatusOr<GpuReading> Read(int index) override;
  std::vector<XidEvent> TakeXids() override;
  absl::Status Probe(int index) override;

  // Walks the GPU's MIG devices for the one whose GPU instance's placement starts at
  // `start_slice`.
  absl::StatusOr<MigDevice> FindMigDevice(const std::string& gpu_uuid, absl::string_view profile,
                                          int start_slice) const override;

 private:
  struct Api;
  NvmlGpuSource(void* handle, std::unique_ptr<Api> api);

  void* handle_;  // from dlopen
  std::unique_ptr<Api> api_;
  std::vector<void*> devices_;  // nvml::Device by index, filled by Discover
  std::vector<std::string> uuids_;
  void* events_ = nullptr;  // nvml::EventSet; null when no GPU supports XID events
};

}  // namespace gpuaas::agent

#include "services/agent/nvml_source.h"

#include <dlfcn.h>

#include <optional>

#include "absl/strings/str_cat.h"
#include "libs/common/logging.h"
#include "libs/gpu/gpu_models.h"
#include "services/agent/internal/nvml_api.h"

namespace gpuaas::agent {

struct NvmlGpuSource::Api {
  nvml::InitV2Fn init = nullptr;
  nvml::ShutdownFn shutdown = nullptr;
  nvml::ErrorStringFn error_string = nullptr;
  nvml::DeviceGetCountV2Fn get_count = nullptr;
  nvml::DeviceGetHandleByIndexV2Fn get_handle = nullptr;
  nvml::DeviceGetUuidFn get_uuid = nullptr;
  nvml::DeviceGetNameFn get_name = nullptr;
  nvml::DeviceGetMemoryInfoFn get_memory = nullptr;
  nvml::DeviceGetUtilizationRatesFn get_utilization = nullptr;
  nvml::DeviceGetTemperatureFn get_temperature = nullptr;
  nvml::DeviceGetPowerUsageFn get_power = nullptr;
  nvml::DeviceGetMigModeFn get_mig_mode = nullptr;
  nvml::DeviceGetMinorNumberFn get_minor = nullptr;
  nvml::EventSetCreateFn event_set_create = nullptr;
  nvml::DeviceRegisterEventsFn register_events = nullptr;
  nvml::EventSetWaitV2Fn event_set_wait = nullptr;
  nvml::EventSetFreeFn event_set_free = nullptr;
  nvml::DeviceGetHandleByUuidFn get_handle_by_uuid = nullptr;
  nvml::DeviceGetMaxMigDeviceCountFn get_max_mig_count = nullptr;
  nvml::DeviceGetMigDeviceHandleByIndexFn get_mig_handle = nullptr;
  nvml::DeviceGetGpuInstanceIdFn get_gpu_instance_id = nullptr;
  nvml::DeviceGetComputeInstanceIdFn get_compute_instance_id = nullptr;
  nvml::DeviceGetGpuInstanceByIdFn get_gpu_instance = nullptr;
  nvml::GpuInstanceGetInfoFn get_gpu_instance_info = nullptr;

  std::string Error(nvml::Return r) const {
    const char* text = error_string != nullptr ? error_string(r) : nullptr;
    return absl::StrCat(text != nullptr ? text : "NVML error", " (", r, ")");
  }
};

namespace {

// Resolves `name` into `fn`; false (with the name in `missing`) when the library lacks it.
template <class Fn>
bool Resolve(void* handle, const char* name, Fn& fn, std::string& missing) {
  fn = reinterpret_cast<Fn>(dlsym(handle, name));
  if (fn == nullptr) {
    missing = name;
    return false;
  }
  return true;
}

nvml::Device Dev(void* d) { return static_cast<nvml::Device>(d); }

}  // namespace

NvmlGpuSource::NvmlGpuSource(void* handle, std::unique_ptr<Api> api)
    : handle_(handle), api_(std::move(api)) {}

absl::StatusOr<std::unique_ptr<NvmlGpuSource>> NvmlGpuSource::Open(const std::string& library) {
  void* handle = dlopen(library.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    const char* why = dlerror();
    return absl::FailedPreconditionError(absl::StrCat(
        "cannot load NVML from ", library, ": ", why != nullptr ? why : "unknown error",
        " (is the NVIDIA driver installed? --nvml-library names another path; "
        "--simulate-gpus runs without GPUs)"));
  }
  auto api = std::make_unique<Api>();
  std::string missing;
  bool ok =
      Resolve(handle, "nvmlInit_v2", api->init, missing) &&
      Resolve(handle, "nvmlShutdown", api->shutdown, missing) &&
      Resolve(handle, "nvmlErrorString", api->error_string, missing) &&
      Resolve(handle, "nvmlDeviceGetCount_v2", api->get_count, missing) &&
      Resolve(handle, "nvmlDeviceGetHandleByIndex_v2", api->get_handle, missing) &&
      Resolve(handle, "nvmlDeviceGetUUID", api->get_uuid, missing) &&
      Resolve(handle, "nvmlDeviceGetName", api->get_name, missing) &&
      Resolve(handle, "nvmlDeviceGetMemoryInfo", api->get_memory, missing) &&
      Resolve(handle, "nvmlDeviceGetUtilizationRates", api->get_utilization, missing) &&
      Resolve(handle, "nvmlDeviceGetTemperature", api->get_temperature, missing) &&
      Resolve(handle, "nvmlDeviceGetPowerUsage", api->get_power, missing) &&
      Resolve(handle, "nvmlDeviceGetMigMode", api->get_mig_mode, missing) &&
      Resolve(handle, "nvmlDeviceGetMinorNumber", api->get_minor, missing) &&
      Resolve(handle, "nvmlEventSetCreate", api->event_set_create, missing) &&
      Resolve(handle, "nvmlDeviceRegisterEvents", api->register_events, missing) &&
      Resolve(handle, "nvmlEventSetWait_v2", api->event_set_wait, missing) &&
      Resolve(handle, "nvmlEventSetFree", api->event_set_free, missing) &&
      Resolve(handle, "nvmlDeviceGetHandleByUUID", api->get_handle_by_uuid, missing) &&
      Resolve(handle, "nvmlDeviceGetMaxMigDeviceCount", api->get_max_mig_count, missing) &&
      Resolve(handle, "nvmlDeviceGetMigDeviceHandleByIndex", api->get_mig_handle, missing) &&
      Resolve(handle, "nvmlDeviceGetGpuInstanceId", api->get_gpu_instance_id, missing) &&
      Resolve(handle, "nvmlDeviceGetComputeInstanceId", api->get_compute_instance_id, missing) &&
      Resolve(handle, "nvmlDeviceGetGpuInstanceById", api->get_gpu_instance, missing) &&
      Resolve(handle, "nvmlGpuInstanceGetInfo", api->get_gpu_instance_info, missing);
  if (!ok) {
    dlclose(handle);
    return absl::FailedPreconditionError(
        absl::StrCat("NVML library ", library, " lacks ", missing, " (driver too old?)"));
  }
  if (nvml::Return r = api->init(); r != nvml::kSuccess) {
    std::string why = api->Error(r);
    dlclose(handle);
    return absl::FailedPreconditionError(absl::StrCat("nvmlInit_v2 failed: ", why));
  }
  return std::unique_ptr<NvmlGpuSource>(new NvmlGpuSource(handle, std::move(api)));
}

NvmlGpuSource::~NvmlGpuSource() {
  if (events_ != nullptr) {
    api_->event_set_free(static_cast<nvml::EventSet>(events_));
  }
  api_->shutdown();
  dlclose(handle_);
}

absl::StatusOr<std::vector<GpuInfo>> NvmlGpuSource::Discover() {
  unsigned int count = 0;
  if (nvml::Return r = api_->get_count(&count); r != nvml::kSuccess) {
    return absl::FailedPreconditionError(
        absl::StrCat("nvmlDeviceGetCount_v2 failed: ", api_->Error(r)));
  }
  auto log = Logger("agent");
  nvml::EventSet events = nullptr;
  if (nvml::Return r = api_->event_set_create(&events); r != nvml::kSuccess) {
    log->warn("NVML event set unavailable, XID errors will go unseen: {}", api_->Error(r));
    events = nullptr;
  }
  std::vector<GpuInfo> gpus;
  devices_.clear();
  uuids_.clear();
  for (unsigned int i = 0; i < count; ++i) {
    nvml::Device dev = nullptr;
    if (nvml::Return r = api_->get_handle(i, &dev); r != nvml::kSuccess) {
      return absl::FailedPreconditionError(
          absl::StrCat("nvmlDeviceGetHandleByIndex_v2(", i, ") failed: ", api_->Error(r)));
    }
    char uuid[nvml::kUuidBufferSize] = {};
    char name[nvml::kNameBufferSize] = {};
    nvml::Memory memory{};
    if (nvml::Return r = api_->get_uuid(dev, uuid, sizeof uuid); r != nvml::kSuccess) {
      return absl::FailedPreconditionError(
          absl::StrCat("nvmlDeviceGetUUID(", i, ") failed: ", api_->Error(r)));
    }
    if (nvml::Return r = api_->get_name(dev, name, sizeof name); r != nvml::kSuccess) {
      return absl::FailedPreconditionError(
          absl::StrCat("nvmlDeviceGetName(", i, ") failed: ", api_->Error(r)));
    }
    if (nvml::Return r = api_->get_memory(dev, &memory); r != nvml::kSuccess) {
      return absl::FailedPreconditionError(
          absl::StrCat("nvmlDeviceGetMemoryInfo(", i, ") failed: ", api_->Error(r)));
    }
    // GPUs without MIG answer NOT_SUPPORTED: MIG is off.
    unsigned int current = 0;
    unsigned int pending = 0;
    bool mig = api_->get_mig_mode(dev, &current, &pending) == nvml::kSuccess &&
               current == nvml::kDeviceMigEnable;
    unsigned int minor = 0;
    if (nvml::Return r = api_->get_minor(dev, &minor); r != nvml::kSuccess) {
      return absl::FailedPreconditionError(
          absl::StrCat("nvmlDeviceGetMinorNumber(", i, ") failed: ", api_->Error(r)));
    }
    GpuInfo info;
    info.index = static_cast<int>(i);
    info.minor = static_cast<int>(minor);
    info.uuid = uuid;
    info.nvml_name = name;
    std::optional<std::string_view> model = gpu::CanonicalGpuModel(info.nvml_name);
    info.model = model ? std::string(*model) : info.nvml_name;
    info.memory_mib = static_cast<int64_t>(memory.total / (1024 * 1024));
    info.mig_enabled = mig;
    if (events != nullptr) {
      if (nvml::Return r = api_->register_events(dev, nvml::kEventTypeXidCriticalError, events);
          r != nvml::kSuccess) {
        log->warn("GPU {} ({}): XID events unavailable: {}", i, info.uuid, api_->Error(r));
      }
    }
    devices_.push_back(dev);
    uuids_.push_back(info.uuid);
    gpus.push_back(std::move(info));
  }
  if (events_ != nullptr) {
    api_->event_set_free(static_cast<nvml::EventSet>(events_));
  }
  events_ = events;
  return gpus;
}

absl::StatusOr<GpuReading> NvmlGpuSource::Read(int index) {
  if (index < 0 || index >= static_cast<int>(devices_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("no GPU ", index));
  }
  nvml::Device dev = Dev(devices_[index]);
  auto failed = [&](std::string_view what, nvml::Return r) {
    return absl::UnavailableError(
        absl::StrCat("GPU ", index, ": ", std::string(what), " failed: ", api_->Error(r)));
  };
  GpuReading out;
  nvml::Utilization util{};
  if (nvml::Return r = api_->get_utilization(dev, &util); r != nvml::kSuccess) {
    return failed("nvmlDeviceGetUtilizationRates", r);
  }
  out.utilization_percent = util.gpu;
  nvml::Memory memory{};
  if (nvml::Return r = api_->get_memory(dev, &memory); r != nvml::kSuccess) {
    return failed("nvmlDeviceGetMemoryInfo", r);
  }
  out.memory_used_mib = static_cast<int64_t>(memory.used / (1024 * 1024));
  unsigned int temp = 0;
  if (nvml::Return r = api_->get_temperature(dev, nvml::kTemperatureGpu, &temp);
      r != nvml::kSuccess) {
    return failed("nvmlDeviceGetTemperature", r);
  }
  out.temperature_celsius = temp;
  // Some boards cannot measure power; that says nothing about their health.
  unsigned int milliwatts = 0;
  if (nvml::Return r = api_->get_power(dev, &milliwatts);
      r != nvml::kSuccess && r != nvml::kErrorNotSupported) {
    return failed("nvmlDeviceGetPowerUsage", r);
  }
  out.power_watts = milliwatts / 1000.0;
  return out;
}

std::vector<XidEvent> NvmlGpuSource::TakeXids() {
  std::vector<XidEvent> out;
  if (events_ == nullptr) {
    return out;
  }
  // A storm of events must not stall sampling: the rest wait for the next poll.
  constexpr int kMaxPerPoll = 256;
  for (int n = 0; n < kMaxPerPoll; ++n) {
    nvml::EventData data{};
    nvml::Return r = api_->event_set_wait(static_cast<nvml::EventSet>(events_), &data, 0);
    if (r != nvml::kSuccess) {
      if (r != nvml::kErrorTimeout) {
        Logger("agent")->debug("nvmlEventSetWait_v2: {}", api_->Error(r));
      }
      break;
    }
    if ((data.event_type & nvml::kEventTypeXidCriticalError) == 0) {
      continue;
    }
    for (size_t i = 0; i < devices_.size(); ++i) {
      if (Dev(devices_[i]) == data.device) {
        out.push_back({static_cast<int>(i), static_cast<int32_t>(data.event_data)});
        break;
      }
    }
  }
  return out;
}

absl::Status NvmlGpuSource::Probe(int index) {
  if (index < 0 || index >= static_cast<int>(devices_.size())) {
    return absl::InvalidArgumentError(absl::StrCat("no GPU ", index));
  }
  nvml::Device dev = Dev(devices_[index]);
  char uuid[nvml::kUuidBufferSize] = {};
  if (nvml::Return r = api_->get_uuid(dev, uuid, sizeof uuid); r != nvml::kSuccess) {
    return absl::UnavailableError(absl::StrCat("nvmlDeviceGetUUID failed: ", api_->Error(r)));
  }
  if (uuids_[index] != uuid) {
    return absl::UnavailableError(
        absl::StrCat("index ", index, " now answers as ", uuid, ", not ", uuids_[index]));
  }
  return Read(index).status();
}

absl::StatusOr<MigDevice> NvmlGpuSource::FindMigDevice(const std::string& gpu_uuid,
                                                       absl::string_view profile,
                                                       int start_slice) const {
  const std::string partition = absl::StrCat(profile, "@", start_slice);
  auto failed = [&](absl::string_view what, nvml::Return r) {
    return absl::FailedPreconditionError(absl::StrCat("GPU ", gpu_uuid, " MIG ", partition, ": ",
                                                      what, " failed: ", api_->Error(r)));
  };
  nvml::Device gpu = nullptr;
  if (nvml::Return r = api_->get_handle_by_uuid(gpu_uuid.c_str(), &gpu); r != nvml::kSuccess) {
    if (r == nvml::kErrorNotFound) {
      return absl::NotFoundError(absl::StrCat("GPU ", gpu_uuid, " is not on this node"));
    }
    return failed("nvmlDeviceGetHandleByUUID", r);
  }
  unsigned int count = 0;
  if (nvml::Return r = api_->get_max_mig_count(gpu, &count); r != nvml::kSuccess) {
    return failed("nvmlDeviceGetMaxMigDeviceCount", r);
  }
  std::optional<MigDevice> found;
  for (unsigned int i = 0; i < count; ++i) {
    nvml::Device mig = nullptr;
    nvml::Return r = api_->get_mig_handle(gpu, i, &mig);
    if (r == nvml::kErrorNotFound) {
      continue;  // an empty slot
    }
    if (r != nvml::kSuccess) {
      return failed("nvmlDeviceGetMigDeviceHandleByIndex", r);
    }
    MigDevice device;
    nvml::GpuInstance instance = nullptr;
    nvml::GpuInstanceInfo info{};
    if (r = api_->get_gpu_instance_id(mig, &device.gpu_instance_id); r != nvml::kSuccess) {
      return failed("nvmlDeviceGetGpuInstanceId", r);
    }
    if (r = api_->get_gpu_instance(gpu, device.gpu_instance_id, &instance); r != nvml::kSuccess) {
      return failed("nvmlDeviceGetGpuInstanceById", r);
    }
    if (r = api_->get_gpu_instance_info(instance, &info); r != nvml::kSuccess) {
      return failed("nvmlGpuInstanceGetInfo", r);
    }
    if (info.placement.start != static_cast<unsigned int>(start_slice)) {
      continue;
    }
    if (found) {
      return absl::FailedPreconditionError(
          absl::StrCat("GPU ", gpu_uuid, " MIG ", partition, ": GPU instance ",
                       device.gpu_instance_id, " has several compute instances; one expected"));
    }
    if (r = api_->get_compute_instance_id(mig, &device.compute_instance_id); r != nvml::kSuccess) {
      return failed("nvmlDeviceGetComputeInstanceId", r);
    }
    char uuid[nvml::kUuidBufferSize] = {};
    if (r = api_->get_uuid(mig, uuid, sizeof uuid); r != nvml::kSuccess) {
      return failed("nvmlDeviceGetUUID of the MIG device", r);
    }
    device.uuid = uuid;
    found = std::move(device);
  }
  if (!found) {
    return absl::NotFoundError(absl::StrCat("GPU ", gpu_uuid, " has no MIG instance ", partition,
                                            " (nvidia-smi mig -cgi ", profile, " -C makes one)"));
  }
  return *std::move(found);
}

}  // namespace gpuaas::agent

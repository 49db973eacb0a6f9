// A stand-in for libnvidia-ml.so.1 for the agent's tests: the NVML functions the agent calls,
// as declared in internal/nvml_api.h, over two GPUs (an A100 80GB with MIG on, split into two
// 3g.40gb instances at memory slices 0 and 4, each with one compute instance; a T4), plus
// control functions a test reaches through dlsym to raise an XID or make a GPU stop answering.
#include <cstring>
#include <deque>
#include <mutex>

#include "services/agent/internal/nvml_api.h"

namespace nvml = gpuaas::agent::nvml;

struct gpuaas::agent::nvml::DeviceSt {
  const char* uuid;
  const char* name;
  unsigned long long total_bytes;
  bool mig_capable;
  unsigned int power_mw;
  unsigned int minor;  // not the index: as on hosts whose driver probed the GPUs in another order
  bool lost = false;
  // MIG devices only: their GPU, GPU instance and compute instance.
  nvml::DeviceSt* parent = nullptr;
  unsigned int gpu_instance_id = 0;
  unsigned int compute_instance_id = 0;
};

struct gpuaas::agent::nvml::GpuInstanceSt {
  nvml::DeviceSt* device;
  unsigned int id;
  unsigned int start;  // memory slice
  unsigned int size;
};

struct gpuaas::agent::nvml::EventSetSt {
  bool registered[2] = {false, false};
};

namespace {

nvml::DeviceSt g_devices[2] = {
    {"GPU-fa4e0000-0000-4000-8000-000000000000", "NVIDIA A100-SXM4-80GB", 81920ULL << 20, true,
     250000, 4},
    {"GPU-fa4e0000-0000-4000-8000-000000000001", "Tesla T4", 15360ULL << 20, false, 30000, 7},
};

// The A100's GPU instances and their MIG devices (NVML's 3-slice profile is id 2).
nvml::GpuInstanceSt g_gpu_instances[2] = {{&g_devices[0], 1, 0, 4}, {&g_devices[0], 2, 4, 4}};
nvml::DeviceSt g_mig_devices[2] = {
    {"MIG-fa4e0000-0000-4000-8000-0000000000a1", "NVIDIA A100-SXM4-80GB MIG 3g.40gb",
     40960ULL << 20, false, 0, 4, false, &g_devices[0], 1, 0},
    {"MIG-fa4e0000-0000-4000-8000-0000000000a2", "NVIDIA A100-SXM4-80GB MIG 3g.40gb",
     40960ULL << 20, false, 0, 4, false, &g_devices[0], 2, 0},
};
constexpr unsigned int kMaxMigDevices = 7;

std::mutex g_mu;
int g_init_count = 0;
nvml::Return g_init_error = nvml::kSuccess;
std::deque<nvml::EventData> g_events;
nvml::EventSetSt* g_set = nullptr;

bool Valid(nvml::Device d) {
  return d == &g_devices[0] || d == &g_devices[1] || d == &g_mig_devices[0] ||
         d == &g_mig_devices[1];
}

nvml::Return Check(nvml::Device d) {
  if (g_init_count == 0) {
    return nvml::kErrorUninitialized;
  }
  if (!Valid(d)) {
    return nvml::kErrorInvalidArgument;
  }
  if (d->lost) {
    return nvml::kErrorGpuIsLost;
  }
  return nvml::kSuccess;
}

nvml::Return CopyString(const char* s, char* out, unsigned int length) {
  if (std::strlen(s) + 1 > length) {
    return nvml::kErrorInsufficientSize;
  }
  std::strcpy(out, s);
  return nvml::kSuccess;
}

// A MIG device's GPU or compute instance id; a whole GPU has none.
nvml::Return MigId(nvml::Device d, unsigned int nvml::DeviceSt::*field, unsigned int* id) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  if (d->parent == nullptr) {
    return nvml::kErrorNotSupported;
  }
  *id = d->*field;
  return nvml::kSuccess;
}

}  // namespace

extern "C" {

// --- control, for tests ---

// Queues XID `xid` on GPU `index`, as the driver would after the fault.
void FakeNvmlRaiseXid(unsigned int index, unsigned long long xid) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (index > 1 || g_set == nullptr || !g_set->registered[index]) {
    return;
  }
  g_events.push_back({&g_devices[index], nvml::kEventTypeXidCriticalError, xid, 0, 0});
}

// A lost GPU answers every query with NVML_ERROR_GPU_IS_LOST.
void FakeNvmlSetLost(unsigned int index, int lost) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (index <= 1) {
    g_devices[index].lost = lost != 0;
  }
}

// The next nvmlInit_v2 fails with `error` (0 = succeeds).
void FakeNvmlFailInit(int error) {
  std::lock_guard<std::mutex> lock(g_mu);
  g_init_error = error;
}

// --- NVML ---

nvml::Return nvmlInit_v2() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_error != nvml::kSuccess) {
    return g_init_error;
  }
  ++g_init_count;
  return nvml::kSuccess;
}

nvml::Return nvmlShutdown() {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) {
    return nvml::kErrorUninitialized;
  }
  --g_init_count;
  return nvml::kSuccess;
}

const char* nvmlErrorString(nvml::Return r) {
  switch (r) {
    case nvml::kSuccess:
      return "Success";
    case nvml::kErrorUninitialized:
      return "Uninitialized";
    case nvml::kErrorDriverNotLoaded:
      return "Driver Not Loaded";
    case nvml::kErrorTimeout:
      return "Timeout";
    case nvml::kErrorGpuIsLost:
      return "GPU is lost";
    default:
      return "Unknown Error";
  }
}

nvml::Return nvmlDeviceGetCount_v2(unsigned int* count) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) {
    return nvml::kErrorUninitialized;
  }
  *count = 2;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvml::Device* device) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) {
    return nvml::kErrorUninitialized;
  }
  if (index > 1) {
    return nvml::kErrorInvalidArgument;
  }
  *device = &g_devices[index];
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetUUID(nvml::Device d, char* uuid, unsigned int length) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  return CopyString(d->uuid, uuid, length);
}

nvml::Return nvmlDeviceGetMinorNumber(nvml::Device d, unsigned int* minor) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  *minor = d->minor;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetName(nvml::Device d, char* name, unsigned int length) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  return CopyString(d->name, name, length);
}

nvml::Return nvmlDeviceGetMemoryInfo(nvml::Device d, nvml::Memory* memory) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  memory->total = d->total_bytes;
  memory->used = d->total_bytes / 4;
  memory->free = d->total_bytes - memory->used;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetUtilizationRates(nvml::Device d, nvml::Utilization* util) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  util->gpu = d == &g_devices[0] ? 87 : 12;
  util->memory = 40;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetTemperature(nvml::Device d, int sensor, unsigned int* temp) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  if (sensor != nvml::kTemperatureGpu) {
    return nvml::kErrorInvalidArgument;
  }
  *temp = d == &g_devices[0] ? 71 : 44;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetPowerUsage(nvml::Device d, unsigned int* milliwatts) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  *milliwatts = d->power_mw;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetMigMode(nvml::Device d, unsigned int* current, unsigned int* pending) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  if (!d->mig_capable) {
    return nvml::kErrorNotSupported;
  }
  *current = nvml::kDeviceMigEnable;
  *pending = nvml::kDeviceMigEnable;
  return nvml::kSuccess;
}

nvml::Return nvmlEventSetCreate(nvml::EventSet* set) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) {
    return nvml::kErrorUninitialized;
  }
  g_set = new nvml::EventSetSt();
  g_events.clear();
  *set = g_set;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceRegisterEvents(nvml::Device d, unsigned long long types,
                                      nvml::EventSet set) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  if (set == nullptr || (types & nvml::kEventTypeXidCriticalError) == 0) {
    return nvml::kErrorInvalidArgument;
  }
  set->registered[d - &g_devices[0]] = true;
  return nvml::kSuccess;
}

nvml::Return nvmlEventSetWait_v2(nvml::EventSet set, nvml::EventData* data, unsigned int) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (set == nullptr || set != g_set) {
    return nvml::kErrorInvalidArgument;
  }
  if (g_events.empty()) {
    return nvml::kErrorTimeout;
  }
  *data = g_events.front();
  g_events.pop_front();
  return nvml::kSuccess;
}

nvml::Return nvmlEventSetFree(nvml::EventSet set) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (set == g_set) {
    g_set = nullptr;
    g_events.clear();
  }
  delete set;
  return nvml::kSuccess;
}

// --- MIG ---

nvml::Return nvmlDeviceGetHandleByUUID(const char* uuid, nvml::Device* device) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (g_init_count == 0) {
    return nvml::kErrorUninitialized;
  }
  for (nvml::DeviceSt& d : g_devices) {
    if (std::strcmp(d.uuid, uuid) == 0) {
      *device = &d;
      return nvml::kSuccess;
    }
  }
  return nvml::kErrorNotFound;
}

nvml::Return nvmlDeviceGetMaxMigDeviceCount(nvml::Device d, unsigned int* count) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  *count = d->mig_capable ? kMaxMigDevices : 0;
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetMigDeviceHandleByIndex(nvml::Device d, unsigned int index,
                                                 nvml::Device* mig) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  if (!d->mig_capable || index >= kMaxMigDevices) {
    return nvml::kErrorInvalidArgument;
  }
  if (index >= 2) {
    return nvml::kErrorNotFound;
  }
  *mig = &g_mig_devices[index];
  return nvml::kSuccess;
}

nvml::Return nvmlDeviceGetGpuInstanceId(nvml::Device d, unsigned int* id) {
  return MigId(d, &nvml::DeviceSt::gpu_instance_id, id);
}

nvml::Return nvmlDeviceGetComputeInstanceId(nvml::Device d, unsigned int* id) {
  return MigId(d, &nvml::DeviceSt::compute_instance_id, id);
}

nvml::Return nvmlDeviceGetGpuInstanceById(nvml::Device d, unsigned int id,
                                          nvml::GpuInstance* instance) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (nvml::Return r = Check(d); r != nvml::kSuccess) {
    return r;
  }
  for (nvml::GpuInstanceSt& gi : g_gpu_instances) {
    if (gi.device == d && gi.id == id) {
      *instance = &gi;
      return nvml::kSuccess;
    }
  }
  return nvml::kErrorNotFound;
}

nvml::Return nvmlGpuInstanceGetInfo(nvml::GpuInstance instance, nvml::GpuInstanceInfo* info) {
  std::lock_guard<std::mutex> lock(g_mu);
  if (instance == nullptr) {
    return nvml::kErrorInvalidArgument;
  }
  *info = {instance->device, instance->id, 2, {instance->start, instance->size}};
  return nvml::kSuccess;
}

}  // extern "C"

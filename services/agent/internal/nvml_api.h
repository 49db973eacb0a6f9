// Our own declarations of the few NVML types, constants and functions the agent calls, as
// nvml.h declares them (NVML API version 11+), so the build needs no NVIDIA headers. The
// functions are resolved by name with dlsym at run time (nvml_source.cc); the fake library the
// tests load (testdata/fake_nvml.cc) implements the same declarations.
#pragma once

namespace gpuaas::agent::nvml {

// nvmlReturn_t: an enum, passed as int.
using Return = int;
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorInsufficientSize = 7;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorTimeout = 10;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorUnknown = 999;

// Opaque handles.
struct DeviceSt;
using Device = DeviceSt*;
struct EventSetSt;
using EventSet = EventSetSt*;
struct GpuInstanceSt;
using GpuInstance = GpuInstanceSt*;

// nvmlMemory_t (v1): bytes.
struct Memory {
  unsigned long long total;
  unsigned long long free;
  unsigned long long used;
};

// nvmlUtilization_t: percent over the last sample period.
struct Utilization {
  unsigned int gpu;
  unsigned int memory;
};

// nvmlEventData_t as nvmlEventSetWait_v2 fills it.
struct EventData {
  Device device;
  unsigned long long event_type;
  unsigned long long event_data;  // the XID for kEventTypeXidCriticalError; 999 = unknown XID
  unsigned int gpu_instance_id;
  unsigned int compute_instance_id;
};

// nvmlGpuInstancePlacement_t: memory slices [start, start + size).
struct GpuInstancePlacement {
  unsigned int start;
  unsigned int size;
};

// nvmlGpuInstanceInfo_t.
struct GpuInstanceInfo {
  Device device;
  unsigned int id;
  unsigned int profile_id;
  GpuInstancePlacement placement;
};

inline constexpr unsigned long long kEventTypeXidCriticalError = 0x0000000000000008ULL;
inline constexpr int kTemperatureGpu = 0;  // NVML_TEMPERATURE_GPU
inline constexpr unsigned int kDeviceMigEnable = 1;
// NVML_DEVICE_UUID_V2_BUFFER_SIZE and NVML_DEVICE_NAME_V2_BUFFER_SIZE.
inline constexpr unsigned int kUuidBufferSize = 96;
inline constexpr unsigned int kNameBufferSize = 96;

// The function types, named after the symbols.
using InitV2Fn = Return (*)();
using ShutdownFn = Return (*)();
using ErrorStringFn = const char* (*)(Return);
using DeviceGetCountV2Fn = Return (*)(unsigned int*);
using DeviceGetHandleByIndexV2Fn = Return (*)(unsigned int, Device*);
using DeviceGetUuidFn = Return (*)(Device, char*, unsigned int);
using DeviceGetNameFn = Return (*)(Device, char*, unsigned int);
using DeviceGetMemoryInfoFn = Return (*)(Device, Memory*);
using DeviceGetUtilizationRatesFn = Return (*)(Device, Utilization*);
using DeviceGetTemperatureFn = Return (*)(Device, int, unsigned int*);
using DeviceGetPowerUsageFn = Return (*)(Device, unsigned int*);  // milliwatts
using DeviceGetMigModeFn = Return (*)(Device, unsigned int*, unsigned int*);
using DeviceGetMinorNumberFn = Return (*)(Device, unsigned int*);
using EventSetCreateFn = Return (*)(EventSet*);
using DeviceRegisterEventsFn = Return (*)(Device, unsigned long long, EventSet);
using EventSetWaitV2Fn = Return (*)(EventSet, EventData*, unsigned int);
using EventSetFreeFn = Return (*)(EventSet);
// MIG: a GPU's MIG devices (one per compute instance) and the GPU instances they belong to.
using DeviceGetHandleByUuidFn = Return (*)(const char*, Device*);
using DeviceGetMaxMigDeviceCountFn = Return (*)(Device, unsigned int*);
using DeviceGetMigDeviceHandleByIndexFn = Return (*)(Device, unsigned int, Device*);
using DeviceGetGpuInstanceIdFn = Return (*)(Device, unsigned int*);
using DeviceGetComputeInstanceIdFn = Return (*)(Device, unsigned int*);
using DeviceGetGpuInstanceByIdFn = Return (*)(Device, unsigned int, GpuInstance*);
using GpuInstanceGetInfoFn = Return (*)(GpuInstance, GpuInstanceInfo*);

}  // namespace gpuaas::agent::nvml

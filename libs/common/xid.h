// NVIDIA XID errors: which ones say the GPU itself is broken (take it out of placement until a
// re-probe finds it well) and which ones only say an application misbehaved (the GPU is fine).
// The agent decides a GPU's health with this table; the stock service only reads the verdict.
//
// Sources: NVIDIA's "XID Errors" table (docs.nvidia.com/deploy/xid-errors) and the XIDs the
// NVIDIA Kubernetes device plugin skips as application errors (13, 31, 43, 45, 68, 109).
#pragma once

#include <cstdint>
#include <string_view>

namespace gpuaas {

enum class XidClass {
  // The workload faulted (illegal address, its channel was reset): the GPU stays healthy.
  kApplication,
  // The hardware or its driver state failed (double-bit ECC, fallen off the bus, NVLink): the
  // GPU is unhealthy.
  kHardware,
  // Not in our table. Treated like hardware, as the device plugin does: a GPU wrongly taken out
  // comes back at the next re-probe, a GPU wrongly kept in fails a tenant's job.
  kUnknown,
};

// The class of `xid`. Pure; never fails.
XidClass ClassifyXid(int32_t xid);

// True for kHardware and kUnknown: the GPU must leave placement until re-probed.
bool XidMakesGpuUnhealthy(int32_t xid);

// A short description for logs ("fallen off the bus"); "unknown XID" outside the table.
std::string_view XidDescription(int32_t xid);

}  // namespace gpuaas

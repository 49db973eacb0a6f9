#include "libs/common/xid.h"

#include <array>

namespace gpuaas {
namespace {

struct XidEntry {
  int32_t xid;
  XidClass cls;
  std::string_view description;
};

constexpr std::array<XidEntry, 18> kXids = {{
    {13, XidClass::kApplication, "graphics engine exception (application fault)"},
    {31, XidClass::kApplication, "GPU memory page fault (application fault)"},
    {43, XidClass::kApplication, "GPU stopped processing (application fault)"},
    {45, XidClass::kApplication, "preemptive cleanup after an application fault"},
    {68, XidClass::kApplication, "video processor exception"},
    {109, XidClass::kApplication, "context switch timeout"},
    {48, XidClass::kHardware, "double-bit ECC error"},
    {61, XidClass::kHardware, "internal micro-controller breakpoint"},
    {62, XidClass::kHardware, "internal micro-controller halt"},
    {63, XidClass::kHardware, "ECC page retirement or row remapping recorded"},
    {64, XidClass::kHardware, "ECC page retirement or row remapping failed"},
    {74, XidClass::kHardware, "NVLink error"},
    {79, XidClass::kHardware, "GPU has fallen off the bus"},
    {92, XidClass::kHardware, "high single-bit ECC error rate"},
    {94, XidClass::kHardware, "contained ECC error"},
    {95, XidClass::kHardware, "uncontained ECC error"},
    {119, XidClass::kHardware, "GSP RPC timeout"},
    {120, XidClass::kHardware, "GSP error"},
}};

const XidEntry* Find(int32_t xid) {
  for (const XidEntry& e : kXids) {
    if (e.xid == xid) {
      return &e;
    }
  }
  return nullptr;
}

}  // namespace

XidClass ClassifyXid(int32_t xid) {
  const XidEntry* e = Find(xid);
  return e == nullptr ? XidClass::kUnknown : e->cls;
}

bool XidMakesGpuUnhealthy(int32_t xid) { return ClassifyXid(xid) != XidClass::kApplication; }

std::string_view XidDescription(int32_t xid) {
  const XidEntry* e = Find(xid);
  return e == nullptr ? "unknown XID" : e->description;
}

}  // namespace gpuaas

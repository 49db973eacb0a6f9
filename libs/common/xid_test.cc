#include "libs/common/xid.h"

#include <gtest/gtest.h>

namespace gpuaas {
namespace {

TEST(XidTest, HardwareXidsMakeTheGpuUnhealthy) {
  for (int32_t xid : {48, 63, 64, 74, 79, 92, 94, 95}) {
    EXPECT_EQ(ClassifyXid(xid), XidClass::kHardware) << xid;
    EXPECT_TRUE(XidMakesGpuUnhealthy(xid)) << xid;
  }
}

TEST(XidTest, ApplicationXidsLeaveTheGpuHealthy) {
  for (int32_t xid : {13, 31, 43, 45}) {
    EXPECT_EQ(ClassifyXid(xid), XidClass::kApplication) << xid;
    EXPECT_FALSE(XidMakesGpuUnhealthy(xid)) << xid;
  }
}

TEST(XidTest, UnknownXidsCountAsHardware) {
  // 999 is what NVML reports for an XID it cannot name.
  for (int32_t xid : {0, 1, 999, -5}) {
    EXPECT_EQ(ClassifyXid(xid), XidClass::kUnknown) << xid;
    EXPECT_TRUE(XidMakesGpuUnhealthy(xid)) << xid;
    EXPECT_EQ(XidDescription(xid), "unknown XID");
  }
  EXPECT_EQ(XidDescription(79), "GPU has fallen off the bus");
}

}  // namespace
}  // namespace gpuaas

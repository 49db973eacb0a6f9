#include "services/agent/runtime/host_gpu_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>

#include "libs/testing/status_matchers.h"

namespace gpuaas::agent {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

TEST(LdconfigDriverDirsTest, TheDirectoriesOfThe64BitDriverLibraries) {
  constexpr char kOutput[] =
      "1234 libs found in cache `/etc/ld.so.cache'\n"
      "\tlibz.so.1 (libc6,x86-64) => /lib/x86_64-linux-gnu/libz.so.1\n"
      "\tlibnvidia-ml.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1\n"
      "\tlibnvidia-ml.so.1 (libc6) => /usr/lib/i386-linux-gnu/libnvidia-ml.so.1\n"
      "\tlibcudart.so.12 (libc6,x86-64) => /usr/local/cuda/lib64/libcudart.so.12\n"
      "\tlibcuda.so.1 (libc6,x86-64) => /usr/lib/x86_64-linux-gnu/libcuda.so.1\n"
      "\tlibcuda.so (libc6,x86-64) => /usr/lib64/nvidia/libcuda.so\n";
  EXPECT_THAT(LdconfigDriverDirs(kOutput),
              ElementsAre("/usr/lib/x86_64-linux-gnu", "/usr/lib64/nvidia"))
      << "not the 32-bit copies, not the CUDA toolkit's own libraries";
  EXPECT_THAT(LdconfigDriverDirs("0 libs found in cache\n"), IsEmpty());
}

TEST(FindHostGpuDriverTest, AHostWithoutTheDriverIsAClearError) {
  if (std::system("/sbin/ldconfig -p | grep -qE '\\s(libcuda\\.|libnvidia-)'") == 0) {
    GTEST_SKIP() << "this host has an NVIDIA driver";
  }
  EXPECT_THAT(FindHostGpuDriver(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                            HasSubstr("lists no NVIDIA driver library")));
}

}  // namespace
}  // namespace gpuaas::agent

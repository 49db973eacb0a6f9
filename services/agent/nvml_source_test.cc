// The real dlopen path against a fake libnvidia-ml (testdata/fake_nvml.cc): discovery, readings,
// XID events and the health verdicts they lead to, and the errors of a library that is missing
// or is not NVML.
#include "services/agent/nvml_source.h"

#include <dlfcn.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "libs/testing/status_matchers.h"
#include "services/agent/gpu_monitor.h"

namespace gpuaas::agent {
namespace {

using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

// The fake's control functions, from the same loaded copy the source uses.
class FakeNvml {
 public:
  FakeNvml() : handle_(dlopen(GPUAAS_FAKE_NVML, RTLD_NOW | RTLD_LOCAL)) {
    EXPECT_NE(handle_, nullptr) << dlerror();
    raise_xid_ = reinterpret_cast<void (*)(unsigned, unsigned long long)>(
        dlsym(handle_, "FakeNvmlRaiseXid"));
    set_lost_ = reinterpret_cast<void (*)(unsigned, int)>(dlsym(handle_, "FakeNvmlSetLost"));
    fail_init_ = reinterpret_cast<void (*)(int)>(dlsym(handle_, "FakeNvmlFailInit"));
  }
  ~FakeNvml() {
    set_lost_(0, 0);
    set_lost_(1, 0);
    fail_init_(0);
    dlclose(handle_);
  }
  void RaiseXid(unsigned index, unsigned long long xid) { raise_xid_(index, xid); }
  void SetLost(unsigned index, bool lost) { set_lost_(index, lost ? 1 : 0); }
  void FailInit(int error) { fail_init_(error); }

 private:
  void* handle_;
  void (*raise_xid_)(unsigned, unsigned long long);
  void (*set_lost_)(unsigned, int);
  void (*fail_init_)(int);
};

TEST(NvmlSourceTest, DiscoversTheGpusThroughTheLoader) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NvmlGpuSource> nvml, NvmlGpuSource::Open(GPUAAS_FAKE_NVML));
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, nvml->Discover());
  ASSERT_EQ(gpus.size(), 2u);
  EXPECT_EQ(gpus[0].index, 0);
  EXPECT_EQ(gpus[0].minor, 4) << "its /dev/nvidia4, whatever its index";
  EXPECT_EQ(gpus[1].minor, 7);
  EXPECT_EQ(gpus[0].uuid, "GPU-fa4e0000-0000-4000-8000-000000000000");
  EXPECT_EQ(gpus[0].nvml_name, "NVIDIA A100-SXM4-80GB");
  EXPECT_EQ(gpus[0].model, "A100-80GB");
  EXPECT_EQ(gpus[0].memory_mib, 81920);
  EXPECT_TRUE(gpus[0].mig_enabled);
  EXPECT_EQ(gpus[1].model, "T4");
  EXPECT_EQ(gpus[1].memory_mib, 15360);
  EXPECT_FALSE(gpus[1].mig_enabled) << "NOT_SUPPORTED means no MIG";
}

TEST(NvmlSourceTest, ReadsTheGauges) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NvmlGpuSource> nvml, NvmlGpuSource::Open(GPUAAS_FAKE_NVML));
  ASSERT_OK(nvml->Discover().status());
  ASSERT_OK_AND_ASSIGN(GpuReading a100, nvml->Read(0));
  EXPECT_EQ(a100.utilization_percent, 87);
  EXPECT_EQ(a100.memory_used_mib, 20480);
  EXPECT_EQ(a100.temperature_celsius, 71);
  EXPECT_EQ(a100.power_watts, 250);
  ASSERT_OK_AND_ASSIGN(GpuReading t4, nvml->Read(1));
  EXPECT_EQ(t4.power_watts, 30);
  EXPECT_THAT(nvml->Read(2), StatusIs(absl::StatusCode::kInvalidArgument));
}

TEST(NvmlSourceTest, XidEventsAndLostGpusDriveHealth) {
  FakeNvml fake;
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NvmlGpuSource> nvml, NvmlGpuSource::Open(GPUAAS_FAKE_NVML));
  ASSERT_OK_AND_ASSIGN(std::vector<GpuInfo> gpus, nvml->Discover());
  FakeClock clock;
  GpuMonitor monitor(*nvml, gpus, clock, {.reprobe_interval = absl::Seconds(30)});
  monitor.Poll();
  EXPECT_TRUE(monitor.Snapshot()[1].healthy);

  fake.RaiseXid(1, 79);
  fake.RaiseXid(0, 13);
  monitor.Poll();
  std::vector<GpuStatus> now = monitor.Snapshot();
  EXPECT_TRUE(now[0].healthy) << "XID 13 is the application's";
  EXPECT_EQ(now[0].last_xid, 13);
  EXPECT_FALSE(now[1].healthy);
  EXPECT_EQ(now[1].last_xid, 79);

  // The device answers and raises nothing new: healthy at the re-probe.
  clock.Advance(absl::Seconds(30));
  monitor.Poll();
  EXPECT_TRUE(monitor.Snapshot()[1].healthy);

  // A GPU that stops answering is unhealthy, and stays so while it does not answer.
  fake.SetLost(0, true);
  EXPECT_THAT(nvml->Probe(0), StatusIs(absl::StatusCode::kUnavailable, HasSubstr("GPU is lost")));
  monitor.Poll();
  EXPECT_FALSE(monitor.Snapshot()[0].healthy);
  clock.Advance(absl::Seconds(60));
  monitor.Poll();
  EXPECT_FALSE(monitor.Snapshot()[0].healthy);
  fake.SetLost(0, false);
  monitor.Poll();
  clock.Advance(absl::Seconds(30));
  monitor.Poll();
  EXPECT_TRUE(monitor.Snapshot()[0].healthy);
}

TEST(NvmlSourceTest, ResolvesAMigPartitionToItsInstancesAndUuid) {
  ASSERT_OK_AND_ASSIGN(std::unique_ptr<NvmlGpuSource> nvml, NvmlGpuSource::Open(GPUAAS_FAKE_NVML));
  const MigResolver& mig = *nvml;
  ASSERT_OK_AND_ASSIGN(MigDevice device,
                       mig.FindMigDevice("GPU-fa4e0000-0000-4000-8000-000000000000", "3g.40gb", 4));
  EXPECT_EQ(device.gpu_instance_id, 2u) << "the GPU instance whose placement starts at slice 4";
  EXPECT_EQ(device.compute_instance_id, 0u);
  EXPECT_EQ(device.uuid, "MIG-fa4e0000-0000-4000-8000-0000000000a2");
  ASSERT_OK_AND_ASSIGN(device,
                       mig.FindMigDevice("GPU-fa4e0000-0000-4000-8000-000000000000", "3g.40gb", 0));
  EXPECT_EQ(device.gpu_instance_id, 1u);

  EXPECT_THAT(mig.FindMigDevice("GPU-fa4e0000-0000-4000-8000-000000000000", "2g.20gb", 2),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("has no MIG instance 2g.20gb@2")));
  EXPECT_THAT(mig.FindMigDevice("GPU-fa4e0000-0000-4000-8000-000000000001", "3g.40gb", 4),
              StatusIs(absl::StatusCode::kNotFound))
      << "the T4 has no MIG";
  EXPECT_THAT(mig.FindMigDevice("GPU-elsewhere", "3g.40gb", 4),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("not on this node")));
}

TEST(NvmlSourceTest, AMissingLibraryIsAClearError) {
  EXPECT_THAT(NvmlGpuSource::Open("/nonexistent/libnvidia-ml.so.1"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("cannot load NVML from /nonexistent/libnvidia-ml.so.1")));
}

TEST(NvmlSourceTest, ALibraryWithoutNvmlIsAClearError) {
  // libm is everywhere and has no nvml* functions.
  EXPECT_THAT(NvmlGpuSource::Open("libm.so.6"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("lacks nvmlInit_v2")));
}

TEST(NvmlSourceTest, AFailingInitIsAClearError) {
  FakeNvml fake;
  fake.FailInit(9);  // NVML_ERROR_DRIVER_NOT_LOADED
  EXPECT_THAT(NvmlGpuSource::Open(GPUAAS_FAKE_NVML),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("nvmlInit_v2 failed: Driver Not Loaded")));
}

}  // namespace
}  // namespace gpuaas::agent

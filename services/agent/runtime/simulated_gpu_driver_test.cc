// The simulated driver from inside a container: a process in its own mount namespace, built by
// bubblewrap from exactly a GpuInjection's devices, binds and environment, opens the injected
// device nodes and loads the injected libraries by soname, and does not see the node's other
// GPU.
#include "services/agent/runtime/simulated_gpu_driver.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
using ::gpuaas::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kGpuA[] = "GPU-aaaaaaaa-0000-4000-8000-000000000000";
constexpr char kGpuB[] = "GPU-bbbbbbbb-0000-4000-8000-000000000000";

std::vector<GpuInfo> TwoGpus() {
  return {{.minor = 0, .uuid = kGpuA}, {.index = 1, .minor = 1, .uuid = kGpuB}};
}

// Runs gpu_probe in a fresh mount, pid, ipc, net and user namespace holding the host's /usr
// (read-only) and nothing of the GPU driver but `injection`. Returns its output.
std::string ProbeInContainer(const GpuInjection& injection, int expected_gpus,
                             const std::vector<std::string>& absent) {
  std::vector<std::string> args = {"bwrap",     "--unshare-all", "--die-with-parent",
                                   "--ro-bind", "/usr",          "/usr"};
  for (const char* dir : {"/bin", "/sbin", "/lib", "/lib32", "/lib64"}) {
    struct stat st;
    if (lstat(dir, &st) != 0) continue;
    if (S_ISLNK(st.st_mode)) {
      args.insert(args.end(), {"--symlink", fs::read_symlink(dir).string(), dir});
    } else {
      args.insert(args.end(), {"--ro-bind", dir, dir});
    }
  }
  // /usr/local is where the libraries go; a tmpfs lets bwrap make their mount points.
  args.insert(args.end(), {"--tmpfs", "/usr/local", "--dev", "/dev", "--proc", "/proc", "--ro-bind",
                           GPUAAS_GPU_PROBE, "/gpu_probe"});
  std::vector<std::string> probe = {"/gpu_probe", std::to_string(expected_gpus)};
  for (const DeviceNode& d : injection.devices) {
    args.insert(args.end(), {"--dev-bind", d.host_path, d.path});
    probe.push_back(d.path);
  }
  for (const HostBind& b : injection.binds) {
    args.insert(args.end(), {b.read_only ? "--ro-bind" : "--bind", b.host_path, b.container_path});
  }
  for (const std::string& a : absent) probe.push_back("!" + a);
  args.insert(args.end(), {"--", "/usr/bin/env", "-i"});
  args.insert(args.end(), injection.env.begin(), injection.env.end());
  args.insert(args.end(), probe.begin(), probe.end());
  const std::string command = absl::StrCat(absl::StrJoin(args, " "), " 2>&1");
  FILE* p = popen(command.c_str(), "r");
  if (p == nullptr) return "popen failed";
  std::string out;
  char buf[512];
  while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
  pclose(p);
  return out;
}

class SimulatedGpuDriverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GPUAAS_SKIP_OR_FAIL_IN_CI() << "the simulated driver's device nodes need CAP_MKNOD";
    }
  }

  gpuaas::testing::TempDir dir_;
};

TEST_F(SimulatedGpuDriverTest, AContainerOpensItsGpusAndLoadsTheDriver) {
  ASSERT_OK_AND_ASSIGN(GpuHost host,
                       PrepareSimulatedDriver(dir_.path().string(), TwoGpus(),
                                              FakeDriverLibrariesIn(GPUAAS_AGENT_DIR)));
  const std::map<std::string, int> minors = {{kGpuA, 0}, {kGpuB, 1}};
  ASSERT_OK_AND_ASSIGN(GpuInjection one, InjectGpus(host, {kGpuB}, minors, "", nullptr));
  EXPECT_EQ(ProbeInContainer(one, 1, {"/dev/nvidia0"}), "ok\n");
  ASSERT_OK_AND_ASSIGN(GpuInjection both, InjectGpus(host, {kGpuA, kGpuB}, minors, "", nullptr));
  EXPECT_EQ(ProbeInContainer(both, 2, {}), "ok\n");
}

TEST_F(SimulatedGpuDriverTest, AContainerOpensItsMigCaps) {
  ASSERT_OK_AND_ASSIGN(GpuHost host,
                       PrepareSimulatedDriver(dir_.path().string(), TwoGpus(),
                                              FakeDriverLibrariesIn(GPUAAS_AGENT_DIR)));
  SimulatedMigResolver mig(TwoGpus());
  ASSERT_OK_AND_ASSIGN(GpuInjection got,
                       InjectGpus(host, {kGpuA}, {{kGpuA, 0}, {kGpuB, 1}}, "2g.20gb@2", &mig));
  EXPECT_EQ(ProbeInContainer(got, 1, {"/dev/nvidia1"}), "ok\n");
}

TEST_F(SimulatedGpuDriverTest, PreparingAgainReplacesTheDriver) {
  ASSERT_OK(PrepareSimulatedDriver(dir_.path().string(), TwoGpus(),
                                   FakeDriverLibrariesIn(GPUAAS_AGENT_DIR))
                .status());
  const fs::path lib = dir_.path() / "lib/libcuda.so.550.0.0";
  struct stat before;
  ASSERT_EQ(stat(lib.c_str(), &before), 0);
  ASSERT_OK(PrepareSimulatedDriver(dir_.path().string(), TwoGpus(),
                                   FakeDriverLibrariesIn(GPUAAS_AGENT_DIR))
                .status());
  struct stat after;
  ASSERT_EQ(stat(lib.c_str(), &after), 0);
  EXPECT_NE(before.st_ino, after.st_ino) << "a new file: a running container keeps the old one";
  EXPECT_EQ(fs::read_symlink(dir_.path() / "lib/libcuda.so.1"), "libcuda.so.550.0.0");
}

TEST_F(SimulatedGpuDriverTest, AMissingFakeLibraryIsNamed) {
  EXPECT_THAT(
      PrepareSimulatedDriver(dir_.path().string(), TwoGpus(),
                             {"/nonexistent/libfake-cuda.so", GPUAAS_FAKE_NVML}),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr("cannot copy the fake libcuda.so from /nonexistent/libfake-cuda.so")));
}

TEST(SimulatedMigResolverTest, StableUuidsPerGpuAndPartition) {
  SimulatedMigResolver mig(TwoGpus());
  ASSERT_OK_AND_ASSIGN(MigDevice a, mig.FindMigDevice(kGpuA, "3g.40gb", 4));
  ASSERT_OK_AND_ASSIGN(MigDevice again, mig.FindMigDevice(kGpuA, "3g.40gb", 4));
  ASSERT_OK_AND_ASSIGN(MigDevice b, mig.FindMigDevice(kGpuB, "3g.40gb", 4));
  EXPECT_EQ(a.uuid, again.uuid);
  EXPECT_NE(a.uuid, b.uuid);
  EXPECT_EQ(a.uuid.size(), std::string("MIG-xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx").size());
  EXPECT_EQ(a.gpu_instance_id, 4u);
  EXPECT_EQ(a.compute_instance_id, 0u);
  EXPECT_THAT(mig.FindMigDevice("GPU-elsewhere", "3g.40gb", 4),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("not on this node")));
}

}  // namespace
}  // namespace gpuaas::agent

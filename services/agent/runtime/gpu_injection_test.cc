// InjectGpus over a simulated node's fake driver (real files, device nodes and libraries in a
// temporary directory) and over a library layout as a driver installs it.
#include "services/agent/runtime/gpu_injection.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/runtime/simulated_gpu_driver.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
using ::gpuaas::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kGpuA[] = "GPU-aaaaaaaa-0000-4000-8000-000000000000";
constexpr char kGpuB[] = "GPU-bbbbbbbb-0000-4000-8000-000000000000";

std::vector<std::string> Paths(const GpuInjection& injection) {
  std::vector<std::string> out;
  for (const DeviceNode& d : injection.devices) out.push_back(d.path);
  return out;
}

std::string BindOf(const GpuInjection& injection, const std::string& container_path) {
  for (const HostBind& b : injection.binds) {
    if (b.container_path == container_path) return b.host_path;
  }
  return "";
}

class GpuInjectionTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (geteuid() != 0) {
      GPUAAS_SKIP_OR_FAIL_IN_CI() << "the simulated driver's device nodes need CAP_MKNOD";
    }
    gpus_ = {{.minor = 4, .uuid = kGpuA}, {.index = 1, .minor = 7, .uuid = kGpuB}};
    ASSERT_OK_AND_ASSIGN(host_, PrepareSimulatedDriver(dir_.path().string(), gpus_,
                                                       FakeDriverLibrariesIn(GPUAAS_AGENT_DIR)));
  }

  absl::StatusOr<GpuInjection> Inject(const std::vector<std::string>& uuids,
                                      const std::string& mig_partition = "") {
    SimulatedMigResolver mig(gpus_);
    return InjectGpus(host_, uuids, minors_, mig_partition, &mig);
  }

  gpuaas::testing::TempDir dir_;
  std::vector<GpuInfo> gpus_;
  std::map<std::string, int> minors_ = {{kGpuA, 4}, {kGpuB, 7}};
  GpuHost host_;
};

TEST_F(GpuInjectionTest, AWholeGpuGetsItsNodeTheControlNodesTheLibrariesAndItsUuid) {
  ASSERT_OK_AND_ASSIGN(GpuInjection got, Inject({kGpuA}));
  EXPECT_THAT(Paths(got), ElementsAre("/dev/nvidia4", "/dev/nvidiactl", "/dev/nvidia-uvm",
                                      "/dev/nvidia-uvm-tools"))
      << "its own GPU's node only, not /dev/nvidia7";
  struct stat null;
  ASSERT_EQ(stat("/dev/null", &null), 0);
  const DeviceNode& gpu = got.devices[0];
  EXPECT_EQ(gpu.host_path, (dir_.path() / "dev/nvidia4").string());
  EXPECT_EQ(gpu.type, 'c');
  EXPECT_EQ(gpu.major, major(null.st_rdev));
  EXPECT_EQ(gpu.minor, minor(null.st_rdev));
  EXPECT_EQ(gpu.file_mode, 0666u);

  const std::string libcuda = (dir_.path() / "lib/libcuda.so.550.0.0").string();
  for (const char* name : {"libcuda.so", "libcuda.so.1", "libcuda.so.550.0.0"}) {
    EXPECT_EQ(BindOf(got, absl::StrCat("/usr/local/nvidia/lib64/", name)), libcuda)
        << name << ": every name of the library, bound from the file itself";
  }
  EXPECT_EQ(BindOf(got, "/usr/local/nvidia/lib64/libnvidia-ml.so.1"),
            (dir_.path() / "lib/libnvidia-ml.so.550.0.0").string());
  for (const HostBind& b : got.binds) EXPECT_TRUE(b.read_only) << b.container_path;
  EXPECT_THAT(got.env, ElementsAre(absl::StrCat("NVIDIA_VISIBLE_DEVICES=", kGpuA),
                                   absl::StrCat("CUDA_VISIBLE_DEVICES=", kGpuA),
                                   "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
                                   "LD_LIBRARY_PATH=/usr/local/nvidia/lib64"));
}

TEST_F(GpuInjectionTest, SeveralGpusInTheWorkloadsOrder) {
  ASSERT_OK_AND_ASSIGN(GpuInjection got, Inject({kGpuB, kGpuA}));
  EXPECT_THAT(Paths(got), ElementsAre("/dev/nvidia7", "/dev/nvidia4", "/dev/nvidiactl",
                                      "/dev/nvidia-uvm", "/dev/nvidia-uvm-tools"));
  EXPECT_THAT(got.env, Contains(absl::StrCat("CUDA_VISIBLE_DEVICES=", kGpuB, ",", kGpuA)));
}

TEST_F(GpuInjectionTest, AMigPartitionGetsItsCapsNodesAndItsMigUuid) {
  ASSERT_OK_AND_ASSIGN(GpuInjection got, Inject({kGpuA}, "3g.40gb@4"));
  ASSERT_OK_AND_ASSIGN(MigDevice mig,
                       SimulatedMigResolver(gpus_).FindMigDevice(kGpuA, "3g.40gb", 4));
  EXPECT_EQ(mig.gpu_instance_id, 4u);
  EXPECT_THAT(mig.uuid, HasSubstr("MIG-"));
  // The driver's numbering: 3 + (gpu minor * 15 + gi) * 9, then its compute instances.
  const int gi_minor = 3 + (4 * 15 + 4) * 9;
  EXPECT_THAT(Paths(got), ElementsAre("/dev/nvidia4", "/dev/nvidiactl", "/dev/nvidia-uvm",
                                      "/dev/nvidia-uvm-tools",
                                      absl::StrCat("/dev/nvidia-caps/nvidia-cap", gi_minor),
                                      absl::StrCat("/dev/nvidia-caps/nvidia-cap", gi_minor + 1)));
  EXPECT_EQ(got.devices[4].file_mode, 0444u)
      << "caps nodes are read-only, as the driver makes them";
  EXPECT_EQ(got.devices[5].host_path,
            (dir_.path() / absl::StrCat("dev/nvidia-caps/nvidia-cap", gi_minor + 1)).string());
  EXPECT_THAT(got.env, Contains(absl::StrCat("NVIDIA_VISIBLE_DEVICES=", mig.uuid)));
  EXPECT_THAT(got.env, Contains(absl::StrCat("CUDA_VISIBLE_DEVICES=", mig.uuid)));
}

TEST_F(GpuInjectionTest, MigErrorsNameWhatIsWrong) {
  EXPECT_THAT(Inject({kGpuA}, "3g.40gb"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("<profile>@<start slice>")));
  EXPECT_THAT(Inject({kGpuA, kGpuB}, "3g.40gb@4"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("on 2 GPUs")));
  EXPECT_THAT(Inject({kGpuA}, "1g.10gb@9"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no MIG instance 1g.10gb@9")));
  EXPECT_THAT(InjectGpus(host_, {kGpuA}, minors_, "3g.40gb@4", nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("resolves no MIG")));
  // A driver whose mig-minors lacks the instance.
  std::ofstream(dir_.path() / "proc/driver/nvidia-caps/mig-minors") << "config 1\nmonitor 2\n";
  EXPECT_THAT(Inject({kGpuA}, "3g.40gb@4"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("mig-minors has no gpu4/gi4/access")));
}

TEST_F(GpuInjectionTest, AMissingCapsNodeSaysHowToMakeIt) {
  fs::remove(dir_.path() / absl::StrCat("dev/nvidia-caps/nvidia-cap", 3 + (4 * 15 + 4) * 9));
  EXPECT_THAT(Inject({kGpuA}, "3g.40gb@4"),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("nvidia-caps/nvidia-cap579 is missing"),
                             HasSubstr("nvidia-modprobe -f "
                                       "/proc/driver/nvidia/capabilities/gpu4/mig/gi4/access"),
                             HasSubstr("creates it: c 1:579 mode 0444"))))
      << "the major from the fake /proc/devices: /dev/null's";
}

TEST_F(GpuInjectionTest, AGpuNotOnTheNodeIsNotFound) {
  EXPECT_THAT(
      Inject({kGpuA, "GPU-elsewhere"}),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("GPU GPU-elsewhere is not on this node")));
}

TEST_F(GpuInjectionTest, MissingDriverLibrariesAreNamed) {
  for (const char* name : {"libcuda.so", "libcuda.so.1", "libcuda.so.550.0.0"}) {
    fs::remove(dir_.path() / "lib" / name);
  }
  EXPECT_THAT(Inject({kGpuA}), StatusIs(absl::StatusCode::kFailedPrecondition,
                                        AllOf(HasSubstr("libcuda.so.1 not found in ["),
                                              HasSubstr((dir_.path() / "lib").string()),
                                              Not(HasSubstr("libnvidia-ml")))));
}

TEST_F(GpuInjectionTest, MissingDeviceNodesAreNamedAndUvmToolsIsOptional) {
  fs::remove(dir_.path() / "dev/nvidia-uvm-tools");
  ASSERT_OK_AND_ASSIGN(GpuInjection got, Inject({kGpuA}));
  EXPECT_THAT(Paths(got), Not(Contains("/dev/nvidia-uvm-tools")));
  fs::remove(dir_.path() / "dev/nvidia-uvm");
  EXPECT_THAT(Inject({kGpuA}), StatusIs(absl::StatusCode::kFailedPrecondition,
                                        HasSubstr("dev/nvidia-uvm is missing (nvidia-modprobe")));
  fs::remove(dir_.path() / "dev/nvidia4");
  EXPECT_THAT(Inject({kGpuA}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("dev/nvidia4 is missing")));
}

TEST_F(GpuInjectionTest, NoGpusMeansNoDriver) {
  ASSERT_OK_AND_ASSIGN(GpuInjection got, Inject({}));
  EXPECT_TRUE(got.devices.empty());
  EXPECT_TRUE(got.binds.empty());
  EXPECT_THAT(got.env, ElementsAre("NVIDIA_VISIBLE_DEVICES=void"));
}

// A driver as installed: versioned files, soname links, a dangling link, a second directory,
// tools in a bin directory.
TEST_F(GpuInjectionTest, FindsEveryLibraryOfAnInstalledDriverOnceAndItsTools) {
  const fs::path lib = dir_.path() / "installed/lib";
  const fs::path lib2 = dir_.path() / "installed/lib2";
  const fs::path bin = dir_.path() / "installed/bin";
  for (const fs::path& d : {lib, lib2, bin}) fs::create_directories(d);
  for (const char* name :
       {"libcuda.so.535.1", "libnvidia-ml.so.535.1", "libnvidia-ptxjitcompiler.so.535.1",
        "libnvidia-pkcs11-openssl3.so.535.1", "libcudart.so.12"}) {
    std::ofstream(lib / name) << "elf";
  }
  fs::create_symlink("libcuda.so.535.1", lib / "libcuda.so.1");
  fs::create_symlink("libnvidia-ml.so.535.1", lib / "libnvidia-ml.so.1");
  fs::create_symlink("libnvidia-cfg.so.535.1", lib / "libnvidia-cfg.so.1");  // dangles
  std::ofstream(lib2 / "libcuda.so.470.1") << "older";  // shadowed by the first directory
  std::ofstream(lib2 / "libcudadebugger.so.1") << "elf";
  std::ofstream(bin / "nvidia-smi") << "#!";
  host_.library_dirs = {lib.string(), lib2.string()};
  host_.binary_dirs = {bin.string()};
  ASSERT_OK_AND_ASSIGN(GpuInjection got, Inject({kGpuA}));
  std::vector<std::string> bound;
  for (const HostBind& b : got.binds) bound.push_back(b.container_path);
  EXPECT_THAT(bound, ElementsAre("/usr/local/nvidia/lib64/libnvidia-ml.so.1",
                                 "/usr/local/nvidia/lib64/libnvidia-ml.so.535.1",
                                 "/usr/local/nvidia/lib64/libcuda.so.1",
                                 "/usr/local/nvidia/lib64/libcuda.so.535.1",
                                 "/usr/local/nvidia/lib64/libcudadebugger.so.1",
                                 "/usr/local/nvidia/lib64/libnvidia-ptxjitcompiler.so.535.1",
                                 "/usr/local/nvidia/lib64/libnvidia-pkcs11-openssl3.so.535.1",
                                 "/usr/bin/nvidia-smi"))
      << "the toolkit's libraries (not the CUDA runtime's libcudart), from the first directory "
         "that has each, dangling links left out";
  EXPECT_EQ(BindOf(got, "/usr/local/nvidia/lib64/libcuda.so.1"),
            (lib / "libcuda.so.535.1").string());
}

TEST(MergeGpuEnvTest, OursReplaceTheImagesExceptTheLibraryPathWhichComesFirst) {
  GpuInjection injection;
  injection.env = {"NVIDIA_VISIBLE_DEVICES=GPU-a", "LD_LIBRARY_PATH=/usr/local/nvidia/lib64",
                   "NVIDIA_DRIVER_CAPABILITIES=compute,utility"};
  EXPECT_THAT(
      MergeGpuEnv({"PATH=/usr/bin", "NVIDIA_VISIBLE_DEVICES=all", "LD_LIBRARY_PATH=/opt/lib",
                   "NVIDIA_VISIBLE_DEVICES_X=1"},
                  injection),
      ElementsAre("PATH=/usr/bin", "NVIDIA_VISIBLE_DEVICES=GPU-a",
                  "LD_LIBRARY_PATH=/usr/local/nvidia/lib64:/opt/lib", "NVIDIA_VISIBLE_DEVICES_X=1",
                  "NVIDIA_DRIVER_CAPABILITIES=compute,utility"));
}

}  // namespace
}  // namespace gpuaas::agent

// The injection as the OCI runtime applies it: runc runs a container in its own user namespace
// (container root = an unprivileged host id, as every workload runs) from a config.json whose
// GPU entries come only from a GpuInjection, and the probe inside opens the devices and loads
// the driver. This is the shape the spec builder gives them: in a user namespace runc cannot
// mknod, so each device is a bind mount of its host node plus a device cgroup rule.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <stdio.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "libs/testing/ci_skip.h"
#include "libs/testing/status_matchers.h"
#include "libs/testing/temp_dir.h"
#include "services/agent/runtime/simulated_gpu_driver.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;

constexpr char kGpuA[] = "GPU-aaaaaaaa-0000-4000-8000-000000000000";
constexpr char kGpuB[] = "GPU-bbbbbbbb-0000-4000-8000-000000000000";
constexpr int kHostIdBase = 200000;  // container root's id on the host

json Bind(const std::string& source, const std::string& destination, bool read_only) {
  return {{"destination", destination},
          {"type", "bind"},
          {"source", source},
          {"options", {"bind", read_only ? "ro" : "rw", "nosuid"}}};
}

// A bundle whose root holds the host's /usr read-only and, of the GPU driver, only `injection`.
json Config(const GpuInjection& injection, const std::vector<std::string>& args) {
  json mounts = json::array({
      {{"destination", "/proc"}, {"type", "proc"}, {"source", "proc"}},
      {{"destination", "/dev"},
       {"type", "tmpfs"},
       {"source", "tmpfs"},
       {"options", {"nosuid", "mode=755", "size=1m"}}},
      Bind("/usr", "/usr", true),
      // The libraries' mount points go under /usr/local, as they would in an image's layers.
      {{"destination", "/usr/local"}, {"type", "tmpfs"}, {"source", "tmpfs"}},
      Bind(GPUAAS_GPU_PROBE, "/gpu_probe", true),
  });
  json rules = json::array({{{"allow", false}, {"access", "rwm"}}});
  for (const DeviceNode& d : injection.devices) {
    mounts.push_back(Bind(d.host_path, d.path, false));
    rules.push_back({{"allow", true},
                     {"type", std::string(1, d.type)},
                     {"major", d.major},
                     {"minor", d.minor},
                     {"access", "rw"}});
  }
  for (const HostBind& b : injection.binds) {
    mounts.push_back(Bind(b.host_path, b.container_path, b.read_only));
  }
  const json ids = json::array({{{"containerID", 0}, {"hostID", kHostIdBase}, {"size", 65536}}});
  return {
      {"ociVersion", "1.0.2"},
      {"process",
       {{"user", {{"uid", 0}, {"gid", 0}}},
        {"args", args},
        {"env", MergeGpuEnv({"PATH=/usr/bin:/bin"}, injection)},
        {"cwd", "/"},
        {"noNewPrivileges", true}}},
      {"root", {{"path", "rootfs"}, {"readonly", true}}},
      {"mounts", mounts},
      {"linux",
       {{"namespaces", json::array({{{"type", "pid"}},
                                    {{"type", "ipc"}},
                                    {{"type", "uts"}},
                                    {{"type", "mount"}},
                                    {{"type", "network"}},
                                    {{"type", "user"}}})},
        {"uidMappings", ids},
        {"gidMappings", ids},
        {"resources", {{"devices", rules}}}}},
  };
}

// runc's output and exit code for `config` run as container `id`.
std::pair<std::string, int> RunInRunc(const fs::path& bundle, const std::string& id,
                                      const json& config) {
  fs::create_directories(bundle / "rootfs");
  for (const char* dir : {"proc", "dev", "usr"}) fs::create_directories(bundle / "rootfs" / dir);
  for (const char* link : {"bin", "lib", "lib64", "sbin"}) {
    fs::create_symlink(absl::StrCat("usr/", link), bundle / "rootfs" / link);
  }
  // Container root owns its root, as it owns an image's idmapped layers.
  EXPECT_EQ(chown((bundle / "rootfs").c_str(), kHostIdBase, kHostIdBase), 0);
  std::ofstream(bundle / "config.json") << config.dump();
  const std::string command = absl::StrCat("runc --root ", (bundle / "state").string(),
                                           " run --bundle ", bundle.string(), " ", id, " 2>&1");
  FILE* p = popen(command.c_str(), "r");
  std::string out;
  char buf[512];
  while (p != nullptr && fgets(buf, sizeof buf, p) != nullptr) out += buf;
  const int status = p != nullptr ? pclose(p) : -1;
  return {out, WIFEXITED(status) ? WEXITSTATUS(status) : -1};
}

TEST(GpuInjectionRuncTest, AUserNamespacedContainerOpensItsGpuAndLoadsTheDriver) {
  if (geteuid() != 0 || std::system("runc --version >/dev/null 2>&1") != 0) {
    GPUAAS_SKIP_OR_FAIL_IN_CI() << "needs root and runc";
  }
  gpuaas::testing::TempDir dir;
  // Container root is an unprivileged host id: the driver's files must be reachable by it.
  fs::permissions(dir.path(),
                  fs::perms::owner_all | fs::perms::group_exec | fs::perms::others_exec);
  std::vector<GpuInfo> gpus = {{.minor = 0, .uuid = kGpuA},
                               {.index = 1, .minor = 1, .uuid = kGpuB}};
  ASSERT_OK_AND_ASSIGN(GpuHost host,
                       PrepareSimulatedDriver((dir.path() / "driver").string(), gpus,
                                              FakeDriverLibrariesIn(GPUAAS_AGENT_DIR)));
  SimulatedMigResolver mig(gpus);
  ASSERT_OK_AND_ASSIGN(GpuInjection injection,
                       InjectGpus(host, {kGpuB}, {{kGpuA, 0}, {kGpuB, 1}}, "3g.40gb@4", &mig));
  std::vector<std::string> args = {"/gpu_probe", "1", "!/dev/nvidia0"};
  for (const DeviceNode& d : injection.devices) args.push_back(d.path);
  const std::string id = absl::StrCat("gpuaas-gpu-injection-test-", getpid());
  auto [out, code] = RunInRunc(dir.path() / "bundle", id, Config(injection, args));
  EXPECT_EQ(out, "ok\n");
  EXPECT_EQ(code, 0);
}

}  // namespace
}  // namespace gpuaas::agent

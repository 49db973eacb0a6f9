#include "services/agent/runtime/simulated_gpu_driver.h"

#include <openssl/sha.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;

// Start slices 0..7: every placement of the MIG geometries we sell (libs/sched/mig.h).
constexpr int kSimulatedGpuInstances = 8;
// The driver's numbering of /dev/nvidia-caps minors: 1 config, 2 monitor, then for each GPU
// minor 15 GPU instances, each its access node and 8 compute instances'.
constexpr int kDriverGpuInstances = 15;
constexpr int kDriverComputeInstances = 8;

int CapsMinor(int gpu_minor, int gpu_instance, int compute_instance /* -1: the GI's own */) {
  return 3 + (gpu_minor * kDriverGpuInstances + gpu_instance) * (kDriverComputeInstances + 1) +
         compute_instance + 1;
}

absl::Status Failed(const fs::path& path, absl::string_view what) {
  return absl::FailedPreconditionError(absl::StrCat("simulated GPU driver: cannot ", what, " ",
                                                    path.string(), ": ", std::strerror(errno)));
}

// A fresh node (a new inode: a container holding the old one keeps it).
absl::Status MakeNode(const fs::path& path, dev_t rdev, mode_t mode) {
  unlink(path.c_str());
  if (mknod(path.c_str(), S_IFCHR | mode, rdev) != 0) {
    return Failed(path, "mknod");
  }
  if (chmod(path.c_str(), mode) != 0) {  // mknod's mode passed through the umask
    return Failed(path, "chmod");
  }
  return absl::OkStatus();
}

// Replaces `path` by renaming a finished temporary over it.
absl::Status Replace(const fs::path& path,
                     const std::function<absl::Status(const fs::path&)>& make) {
  const fs::path tmp = path.string() + ".tmp";
  std::error_code ec;
  fs::remove(tmp, ec);
  GPUAAS_RETURN_IF_ERROR(make(tmp));
  if (rename(tmp.c_str(), path.c_str()) != 0) {
    return Failed(path, "rename into");
  }
  return absl::OkStatus();
}

absl::Status WriteText(const fs::path& path, const std::string& text) {
  return Replace(path, [&](const fs::path& tmp) {
    std::ofstream out(tmp);
    out << text;
    out.close();
    return out ? absl::OkStatus() : Failed(tmp, "write");
  });
}

// `base`.<version> copied from `source`, with the soname `base`.1 and `base` linking to it.
absl::Status InstallLibrary(const fs::path& lib_dir, const std::string& base,
                            const std::string& source) {
  const std::string file = absl::StrCat(base, ".", kSimulatedDriverVersion);
  GPUAAS_RETURN_IF_ERROR(Replace(lib_dir / file, [&](const fs::path& tmp) {
    std::error_code ec;
    fs::copy_file(source, tmp, ec);
    return ec ? absl::FailedPreconditionError(
                    absl::StrCat("simulated GPU driver: cannot copy the fake ", base, " from ",
                                 source, ": ", ec.message()))
              : absl::OkStatus();
  }));
  for (const std::string& link : {absl::StrCat(base, ".1"), base}) {
    GPUAAS_RETURN_IF_ERROR(Replace(lib_dir / link, [&](const fs::path& tmp) {
      return symlink(file.c_str(), tmp.c_str()) == 0 ? absl::OkStatus() : Failed(tmp, "symlink");
    }));
  }
  return absl::OkStatus();
}

}  // namespace

SimulatedDriverLibraries FakeDriverLibrariesIn(const std::string& dir) {
  // The file names of the fake_cuda and fake_nvml targets.
  return {absl::StrCat(dir, "/libfake-cuda.so"), absl::StrCat(dir, "/libfake-nvidia-ml.so")};
}

absl::StatusOr<GpuHost> PrepareSimulatedDriver(const std::string& dir,
                                               const std::vector<GpuInfo>& gpus,
                                               const SimulatedDriverLibraries& libraries) {
  GpuHost host;
  host.dev_dir = absl::StrCat(dir, "/dev");
  host.library_dirs = {absl::StrCat(dir, "/lib")};
  host.binary_dirs = {};
  host.proc_dir = absl::StrCat(dir, "/proc");
  const fs::path caps_dir = fs::path(host.dev_dir) / "nvidia-caps";
  const fs::path minors_dir = fs::path(host.proc_dir) / "driver/nvidia-caps";
  for (const fs::path& d : {caps_dir, fs::path(host.library_dirs[0]), minors_dir}) {
    std::error_code ec;
    fs::create_directories(d, ec);
    if (ec) {
      return absl::FailedPreconditionError(
          absl::StrCat("simulated GPU driver: cannot create ", d.string(), ": ", ec.message()));
    }
  }
  // Every node is /dev/null under another name: opens, reads nothing, takes any write.
  struct stat null;
  if (stat("/dev/null", &null) != 0) {
    return Failed("/dev/null", "stat");
  }
  const fs::path dev(host.dev_dir);
  for (const char* name : {"nvidiactl", "nvidia-uvm", "nvidia-uvm-tools"}) {
    GPUAAS_RETURN_IF_ERROR(MakeNode(dev / name, null.st_rdev, 0666));
  }
  std::string minors = "config 1\nmonitor 2\n";
  for (const GpuInfo& gpu : gpus) {
    GPUAAS_RETURN_IF_ERROR(MakeNode(dev / absl::StrCat("nvidia", gpu.minor), null.st_rdev, 0666));
    for (int gi = 0; gi < kSimulatedGpuInstances; ++gi) {
      for (int ci : {-1, 0}) {
        const int n = CapsMinor(gpu.minor, gi, ci);
        absl::StrAppend(&minors, "gpu", gpu.minor, "/gi", gi, ci < 0 ? "" : absl::StrCat("/ci", ci),
                        "/access ", n, "\n");
        GPUAAS_RETURN_IF_ERROR(
            MakeNode(caps_dir / absl::StrCat("nvidia-cap", n), null.st_rdev, 0444));
      }
    }
  }
  GPUAAS_RETURN_IF_ERROR(WriteText(minors_dir / "mig-minors", minors));
  GPUAAS_RETURN_IF_ERROR(
      WriteText(fs::path(host.proc_dir) / "devices",
                absl::StrCat("Character devices:\n", major(null.st_rdev), " nvidia-caps\n")));
  const fs::path lib_dir(host.library_dirs[0]);
  GPUAAS_RETURN_IF_ERROR(InstallLibrary(lib_dir, "libcuda.so", libraries.libcuda));
  GPUAAS_RETURN_IF_ERROR(InstallLibrary(lib_dir, "libnvidia-ml.so", libraries.libnvidia_ml));
  return host;
}

SimulatedMigResolver::SimulatedMigResolver(std::vector<GpuInfo> gpus) : gpus_(std::move(gpus)) {}

absl::StatusOr<MigDevice> SimulatedMigResolver::FindMigDevice(const std::string& gpu_uuid,
                                                              absl::string_view profile,
                                                              int start_slice) const {
  bool known = false;
  for (const GpuInfo& gpu : gpus_) {
    known = known || gpu.uuid == gpu_uuid;
  }
  if (!known) {
    return absl::NotFoundError(absl::StrCat("GPU ", gpu_uuid, " is not on this node"));
  }
  if (start_slice < 0 || start_slice >= kSimulatedGpuInstances) {
    return absl::NotFoundError(
        absl::StrCat("GPU ", gpu_uuid, " has no MIG instance ", profile, "@", start_slice));
  }
  const std::string seed =
      absl::StrCat("gpuaas-simulated-mig/", gpu_uuid, "/", profile, "@", start_slice);
  unsigned char digest[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(seed.data()), seed.size(), digest);
  MigDevice device;
  device.gpu_instance_id = static_cast<uint32_t>(start_slice);
  device.compute_instance_id = 0;
  device.uuid = "MIG-";
  char hex[3];
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) {
      device.uuid += '-';
    }
    std::snprintf(hex, sizeof hex, "%02x", digest[i]);
    device.uuid += hex;
  }
  return device;
}

}  // namespace gpuaas::agent

#include "services/agent/runtime/gpu_injection.h"

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <array>
#include <filesystem>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "libs/common/files.h"
#include "libs/common/status_macros.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;

// The toolkit's libraries for the utility and compute capabilities (libnvidia-container's
// utility_libs and compute_libs); most exist only on some driver versions.
constexpr std::array<absl::string_view, 13> kDriverLibraries = {"libnvidia-ml.so",
                                                                "libnvidia-cfg.so",
                                                                "libcuda.so",
                                                                "libcudadebugger.so",
                                                                "libnvidia-opencl.so",
                                                                "libnvidia-gpucomp.so",
                                                                "libnvidia-ptxjitcompiler.so",
                                                                "libnvidia-fatbinaryloader.so",
                                                                "libnvidia-allocator.so",
                                                                "libnvidia-compiler.so",
                                                                "libnvidia-pkcs11.so",
                                                                "libnvidia-pkcs11-openssl3.so",
                                                                "libnvidia-nvvm.so"};
// Without these nothing runs: CUDA loads libcuda.so.1, NVML users libnvidia-ml.so.1.
constexpr std::array<absl::string_view, 2> kRequiredLibraries = {"libcuda.so.1",
                                                                 "libnvidia-ml.so.1"};
// Its utility and compute binaries.
constexpr std::array<absl::string_view, 5> kDriverBinaries = {
    "nvidia-smi", "nvidia-debugdump", "nvidia-persistenced", "nvidia-cuda-mps-control",
    "nvidia-cuda-mps-server"};

// `name` is `base` or one of its versions (libcuda.so.1, libcuda.so.550.54.15).
bool IsNameOf(absl::string_view name, absl::string_view base) {
  return name == base ||
         (absl::StartsWith(name, base) && name.size() > base.size() && name[base.size()] == '.');
}

// The regular file `path` is, symlinks resolved; nullopt when it is none (or dangles).
std::optional<std::string> RegularFile(const fs::path& path) {
  std::error_code ec;
  fs::path real = fs::canonical(path, ec);
  if (ec || !fs::is_regular_file(real, ec)) {
    return std::nullopt;
  }
  return real.string();
}

// Each library from the first directory that has it, under every name it has there.
absl::StatusOr<std::vector<HostBind>> LibraryBinds(const GpuHost& host) {
  std::vector<HostBind> binds;
  std::set<std::string> names;
  for (absl::string_view base : kDriverLibraries) {
    for (const std::string& dir : host.library_dirs) {
      std::error_code ec;
      std::vector<HostBind> found;
      for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
        const std::string name = e.path().filename().string();
        if (!IsNameOf(name, base)) {
          continue;
        }
        if (std::optional<std::string> real = RegularFile(e.path())) {
          found.push_back({*real, absl::StrCat(kContainerDriverLibDir, "/", name), true});
          names.insert(name);
        }
      }
      if (!found.empty()) {
        // In name order, not the directory's: the same driver gives the same spec.
        std::sort(found.begin(), found.end(), [](const HostBind& a, const HostBind& b) {
          return a.container_path < b.container_path;
        });
        binds.insert(binds.end(), found.begin(), found.end());
        break;
      }
    }
  }
  std::vector<absl::string_view> missing;
  for (absl::string_view required : kRequiredLibraries) {
    if (!names.contains(std::string(required))) {
      missing.push_back(required);
    }
  }
  if (!missing.empty()) {
    return absl::FailedPreconditionError(
        absl::StrCat("the NVIDIA driver's ", absl::StrJoin(missing, " and "), " not found in [",
                     absl::StrJoin(host.library_dirs, ", "), "] (is the driver installed?)"));
  }
  return binds;
}

std::vector<HostBind> BinaryBinds(const GpuHost& host) {
  std::vector<HostBind> binds;
  for (absl::string_view name : kDriverBinaries) {
    for (const std::string& dir : host.binary_dirs) {
      if (std::optional<std::string> real = RegularFile(fs::path(dir) / std::string(name))) {
        binds.push_back({*real, absl::StrCat(kContainerDriverBinDir, "/", name), true});
        break;
      }
    }
  }
  return binds;
}

// The device node `name` (relative to /dev) as the host has it; nullopt when absent.
absl::StatusOr<std::optional<DeviceNode>> StatNode(const GpuHost& host, absl::string_view name) {
  DeviceNode node;
  node.path = absl::StrCat("/dev/", name);
  node.host_path = absl::StrCat(host.dev_dir, "/", name);
  struct stat st;
  if (stat(node.host_path.c_str(), &st) != 0) {
    return std::nullopt;
  }
  if (!S_ISCHR(st.st_mode)) {
    return absl::FailedPreconditionError(
        absl::StrCat(node.host_path, " is not a character device"));
  }
  node.major = major(st.st_rdev);
  node.minor = minor(st.st_rdev);
  node.file_mode = st.st_mode & 07777;
  return node;
}

absl::StatusOr<DeviceNode> RequiredNode(const GpuHost& host, absl::string_view name,
                                        absl::string_view remedy) {
  GPUAAS_ASSIGN_OR_RETURN(std::optional<DeviceNode> node, StatNode(host, name));
  if (!node) {
    return absl::FailedPreconditionError(absl::StrCat(
        "the NVIDIA driver's device node ", host.dev_dir, "/", name, " is missing (", remedy, ")"));
  }
  return *std::move(node);
}

// "3g.40gb@4" -> ("3g.40gb", 4).
absl::StatusOr<std::pair<std::string, int>> ParseMigPartition(const std::string& partition) {
  std::vector<std::string> parts = absl::StrSplit(partition, '@');
  int start = -1;
  if (parts.size() != 2 || parts[0].empty() || !absl::SimpleAtoi(parts[1], &start) || start < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mig_partition \"", partition, "\": want <profile>@<start slice>, e.g. 3g.40gb@4"));
  }
  return std::make_pair(parts[0], start);
}

// The other field of the two-field line of `text` whose field `key_field` (0 or 1) is `key`:
// /proc/devices has "<major> <driver>" lines, mig-minors "<cap> <minor>" lines.
std::optional<std::string> PairedWith(absl::string_view text, absl::string_view key,
                                      int key_field) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    std::vector<absl::string_view> f = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    if (f.size() == 2 && f[key_field] == key) {
      return std::string(f[1 - key_field]);
    }
  }
  return std::nullopt;
}

// The /dev/nvidia-caps node granting `cap` ("gpu4/gi1/access"), numbered by mig-minors.
absl::StatusOr<DeviceNode> CapsNode(const GpuHost& host, const std::string& mig_minors,
                                    const std::string& cap) {
  std::optional<std::string> minor = PairedWith(mig_minors, cap, 0);
  if (!minor) {
    return absl::FailedPreconditionError(absl::StrCat(
        host.proc_dir, "/driver/nvidia-caps/mig-minors has no ", cap, " (driver too old?)"));
  }
  // For the remedy: the node nvidia-modprobe would make.
  absl::StatusOr<std::string> devices = ReadFile(absl::StrCat(host.proc_dir, "/devices"));
  const std::string caps_major =
      devices.ok() ? PairedWith(*devices, "nvidia-caps", 1).value_or("?") : "?";
  return RequiredNode(host, absl::StrCat("nvidia-caps/nvidia-cap", *minor),
                      absl::StrCat("nvidia-modprobe -f /proc/driver/nvidia/capabilities/",
                                   absl::StrReplaceAll(cap, {{"/gi", "/mig/gi"}}),
                                   " creates it: c ", caps_major, ":", *minor, " mode 0444"));
}

// The MIG device of `partition` on `gpu_uuid` and the caps nodes that grant it.
absl::Status InjectMig(const GpuHost& host, const std::string& gpu_uuid, int gpu_minor,
                       const std::string& partition, const MigResolver* mig, GpuInjection& out,
                       std::string& visible) {
  GPUAAS_ASSIGN_OR_RETURN(auto profile_start, ParseMigPartition(partition));
  if (mig == nullptr) {
    return absl::FailedPreconditionError(
        absl::StrCat("mig_partition ", partition, " asked for, but this node resolves no MIG"));
  }
  GPUAAS_ASSIGN_OR_RETURN(MigDevice device,
                          mig->FindMigDevice(gpu_uuid, profile_start.first, profile_start.second));
  const std::string minors_path = absl::StrCat(host.proc_dir, "/driver/nvidia-caps/mig-minors");
  absl::StatusOr<std::string> minors = ReadFile(minors_path);
  if (!minors.ok()) {
    return absl::FailedPreconditionError(
        absl::StrCat("cannot read ", minors_path, " (is the driver's MIG support loaded?)"));
  }
  const std::string gi = absl::StrCat("gpu", gpu_minor, "/gi", device.gpu_instance_id);
  for (const std::string& cap : {absl::StrCat(gi, "/access"),
                                 absl::StrCat(gi, "/ci", device.compute_instance_id, "/access")}) {
    GPUAAS_ASSIGN_OR_RETURN(DeviceNode node, CapsNode(host, *minors, cap));
    out.devices.push_back(std::move(node));
  }
  visible = device.uuid;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GpuInjection> InjectGpus(const GpuHost& host,
                                        const std::vector<std::string>& gpu_uuids,
                                        const std::map<std::string, int>& gpu_minor,
                                        const std::string& mig_partition, const MigResolver* mig) {
  GpuInjection out;
  if (gpu_uuids.empty()) {
    if (!mig_partition.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("mig_partition ", mig_partition, " without a GPU"));
    }
    // The toolkit's word for "no GPUs, no driver": an image's own =all must not count.
    out.env.push_back("NVIDIA_VISIBLE_DEVICES=void");
    return out;
  }
  if (!mig_partition.empty() && gpu_uuids.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "mig_partition ", mig_partition, " on ", gpu_uuids.size(), " GPUs; a partition is of one"));
  }
  std::vector<std::string> visible;
  for (const std::string& uuid : gpu_uuids) {
    auto it = gpu_minor.find(uuid);
    if (it == gpu_minor.end()) {
      return absl::NotFoundError(absl::StrCat("GPU ", uuid, " is not on this node"));
    }
    GPUAAS_ASSIGN_OR_RETURN(
        DeviceNode node,
        RequiredNode(host, absl::StrCat("nvidia", it->second),
                     absl::StrCat("GPU ", uuid, "'s node; is the driver loaded?")));
    out.devices.push_back(std::move(node));
    visible.push_back(uuid);
  }
  GPUAAS_ASSIGN_OR_RETURN(DeviceNode ctl, RequiredNode(host, "nvidiactl", "is the driver loaded?"));
  out.devices.push_back(std::move(ctl));
  GPUAAS_ASSIGN_OR_RETURN(DeviceNode uvm,
                          RequiredNode(host, "nvidia-uvm", "nvidia-modprobe -u -c=0 creates it"));
  out.devices.push_back(std::move(uvm));
  GPUAAS_ASSIGN_OR_RETURN(std::optional<DeviceNode> tools, StatNode(host, "nvidia-uvm-tools"));
  if (tools) {
    out.devices.push_back(*std::move(tools));
  }
  if (!mig_partition.empty()) {
    GPUAAS_RETURN_IF_ERROR(InjectMig(host, gpu_uuids[0], gpu_minor.at(gpu_uuids[0]), mig_partition,
                                     mig, out, visible[0]));
  }
  GPUAAS_ASSIGN_OR_RETURN(out.binds, LibraryBinds(host));
  std::vector<HostBind> tools_binds = BinaryBinds(host);
  out.binds.insert(out.binds.end(), tools_binds.begin(), tools_binds.end());
  const std::string devices = absl::StrJoin(visible, ",");
  out.env = {absl::StrCat("NVIDIA_VISIBLE_DEVICES=", devices),
             absl::StrCat("CUDA_VISIBLE_DEVICES=", devices),
             "NVIDIA_DRIVER_CAPABILITIES=compute,utility",
             absl::StrCat("LD_LIBRARY_PATH=", kContainerDriverLibDir)};
  return out;
}

std::vector<std::string> MergeGpuEnv(std::vector<std::string> image_env,
                                     const GpuInjection& injection) {
  for (const std::string& ours : injection.env) {
    const std::string name = ours.substr(0, ours.find('=') + 1);  // with its '='
    auto it = std::find_if(image_env.begin(), image_env.end(),
                           [&](const std::string& e) { return absl::StartsWith(e, name); });
    if (it == image_env.end()) {
      image_env.push_back(ours);
    } else if (name == "LD_LIBRARY_PATH=" && it->size() > name.size()) {
      *it = absl::StrCat(ours, ":", it->substr(name.size()));
    } else {
      *it = ours;
    }
  }
  return image_env;
}

}  // namespace gpuaas::agent

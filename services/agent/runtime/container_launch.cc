#include "services/agent/runtime/container_launch.h"

#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "libs/common/status_macros.h"
#include "nlohmann/json.hpp"
#include "services/agent/runtime/container_rootfs.h"
#include "services/agent/runtime/mount_source.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
namespace pb = ::gpuaas::instance::v1;

// The workload's storage mounts, each bound from its safely opened descriptor (mount_source.h)
// to <dir>/mounts/<i>, where runc binds it from: runc resolves the container side within the
// root file system, and the host side is ours.
absl::StatusOr<std::vector<ContainerBind>> BindStorages(const pb::Workload& w, const fs::path& dir,
                                                        uid_t uid, gid_t gid) {
  std::vector<ContainerBind> binds;
  for (int i = 0; i < w.mounts_size(); ++i) {
    const pb::Mount& m = w.mounts(i);
    absl::StatusOr<int> fd = OpenMountSource(m.host_path(), m.sub_path(), uid, gid);
    if (!fd.ok()) {
      return absl::FailedPreconditionError(
          absl::StrCat("mount ", m.mount_path(), ": ", fd.status().message()));
    }
    if (geteuid() == 0 && gid != uid && !m.read_only()) ShareTreeWith(*fd, gid);
    const fs::path target = dir / "mounts" / std::to_string(i);
    std::error_code ec;
    fs::create_directories(target, ec);
    const std::string source = absl::StrCat("/proc/self/fd/", *fd);
    const bool ok = IsMountPoint(target) ||
                    mount(source.c_str(), target.c_str(), nullptr, MS_BIND | MS_REC, nullptr) == 0;
    const int saved = errno;
    close(*fd);
    if (!ok) {
      return absl::InternalError(
          absl::StrCat("mount ", m.mount_path(), ": bind: ", strerror(saved)));
    }
    binds.push_back({.host_path = target.string(),
                     .container_path = m.mount_path(),
                     .read_only = m.read_only()});
  }
  return binds;
}

std::vector<std::string> RuntimeEnv(const pb::Workload& w) {
  std::vector<std::string> env = {absl::StrCat("GPUAAS_INSTANCE_ID=", w.instance_id()),
                                  absl::StrCat("GPUAAS_WORKLOAD_ID=", w.workload_id())};
  // The workload has its own network: each port is itself (the host port is the node's
  // business), kept for images written for the process runtime.
  for (const pb::Port& p : w.ports()) {
    env.push_back(absl::StrCat("GPUAAS_PORT_", p.port(), "=", p.port()));
  }
  return env;
}

}  // namespace

std::string RuncRoot(const std::string& runtime_root) { return runtime_root + "/.runc"; }

absl::StatusOr<ContainerImage> NodeSystemImage(const std::string& runtime_root) {
  const fs::path layer = fs::path(runtime_root) / ".system";
  std::error_code ec;
  // Made once, by one start: the others wait rather than tear down its half-made copy.
  static absl::Mutex making;
  absl::MutexLock lock(&making);
  if (!fs::exists(layer / "ready")) {
    const fs::path tmp = fs::path(runtime_root) / ".system.tmp";
    fs::remove_all(tmp, ec);
    for (const char* d : {"usr", "etc", "tmp", "root", "home", "proc", "sys", "dev", "run", "var",
                          "var/tmp", "mnt", "opt", "srv"}) {
      fs::create_directories(tmp / d, ec);
    }
    chmod((tmp / "tmp").c_str(), 01777);
    chmod((tmp / "var" / "tmp").c_str(), 01777);
    chmod((tmp / "root").c_str(), 0700);
    // bin, sbin, lib, lib32, lib64 as the node has them: links into usr on a merged-/usr node.
    for (const char* d : {"bin", "sbin", "lib", "lib32", "lib64", "libx32"}) {
      const fs::path host = fs::path("/") / d;
      if (fs::is_symlink(host, ec)) {
        fs::create_symlink(fs::read_symlink(host, ec), tmp / d, ec);
      } else if (fs::is_directory(host, ec)) {
        fs::create_directories(tmp / d, ec);
      }
    }
    std::ofstream(tmp / "ready") << "1\n";
    fs::rename(tmp, layer, ec);
    if (ec && !fs::exists(layer / "ready")) {
      return absl::InternalError(absl::StrCat("cannot make ", layer.string(), ": ", ec.message()));
    }
  }
  ContainerImage image{.digest = "node-system",
                       .layer_dirs = {layer.string()},
                       .process = {.env = {"LANG=C.UTF-8"}}};
  image.trees["/usr"] = "/usr";
  image.binds.push_back({"/etc", "/etc", true});
  for (const char* d : {"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32"}) {
    // A node whose / holds real directories: those are bound too.
    if (!fs::is_symlink(d, ec) && fs::is_directory(d, ec)) image.binds.push_back({d, d, true});
  }
  return image;
}

absl::StatusOr<PreparedContainer> PrepareContainer(const ContainerOptions& options,
                                                   const std::string& runtime_root,
                                                   const ContainerLaunch& launch,
                                                   bool* pull_failed) {
  const pb::Workload& w = *launch.workload;
  const fs::path dir = launch.dir;
  *pull_failed = false;
  absl::StatusOr<ContainerImage> image = absl::FailedPreconditionError("this node pulls no images");
  if (w.image_reference().empty()) {
    image = NodeSystemImage(runtime_root);
  } else if (options.images != nullptr) {
    image = options.images->Pull(w, launch.progress);
    *pull_failed = !image.ok();
  }
  if (!image.ok()) return image.status();
  std::ofstream(dir / "image", std::ios::trunc) << image->digest << "\n";

  ContainerSpecInputs spec{.workload = &w,
                           .image = image->process,
                           .id_base = launch.id_base,
                           .tenant_gid = launch.tenant_gid,
                           .env = RuntimeEnv(w)};
  if (rlimit files{}; getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_max != RLIM_INFINITY) {
    spec.open_files_ceiling = static_cast<int64_t>(files.rlim_max);
  }
  std::vector<std::string> tree_paths, tree_sources;
  for (const auto& [path, source] : image->trees) {
    tree_paths.push_back(path);
    tree_sources.push_back(source);
  }
  GPUAAS_ASSIGN_OR_RETURN(MountedRootfs mounted,
                          MountRootfs({.dir = dir.string(),
                                       .layer_dirs = image->layer_dirs,
                                       .id_base = launch.id_base,
                                       .disk_bytes = w.limits().ephemeral_disk_bytes(),
                                       .trees = tree_sources}));
  spec.rootfs = mounted.rootfs;
  const gid_t storage_gid = launch.tenant_gid != 0 ? launch.tenant_gid : launch.id_base;
  GPUAAS_ASSIGN_OR_RETURN(std::vector<ContainerBind> storages,
                          BindStorages(w, dir, launch.id_base, storage_gid));
  spec.binds.clear();
  for (size_t i = 0; i < tree_paths.size(); ++i) {
    spec.binds.push_back({mounted.trees[i], tree_paths[i], /*read_only=*/false});
  }
  spec.binds.insert(spec.binds.end(), image->binds.begin(), image->binds.end());
  spec.binds.insert(spec.binds.end(), storages.begin(), storages.end());
  if (w.gpu_uuids_size() > 0) {
    if (!options.gpus) return absl::FailedPreconditionError("this node injects no GPUs");
    GPUAAS_ASSIGN_OR_RETURN(ContainerGpus gpus, options.gpus(w));
    spec.devices = std::move(gpus.devices);
    spec.binds.insert(spec.binds.end(), gpus.binds.begin(), gpus.binds.end());
    for (const std::string& kv : gpus.env) {
      // The driver's libraries first, then the image's own (NVIDIA's images list theirs).
      constexpr std::string_view kPath = "LD_LIBRARY_PATH=";
      std::string value = kv;
      for (const std::string& image_kv : spec.image.env) {
        if (kv.rfind(kPath, 0) == 0 && image_kv.rfind(kPath, 0) == 0) {
          value = absl::StrCat(kv, ":", image_kv.substr(kPath.size()));
        }
      }
      spec.env.push_back(value);
    }
  } else {
    spec.env.insert(spec.env.end(), {"CUDA_VISIBLE_DEVICES=", "NVIDIA_VISIBLE_DEVICES=void"});
  }
  if (options.networks != nullptr) {
    std::map<int, int> host_to_port;
    for (const auto& [port, host] : launch.host_ports) host_to_port[host] = port;
    std::set<int> public_host_ports;
    for (const instance::v1::Port& p : w.ports()) {
      auto host = launch.host_ports.find(p.port());
      if (p.is_public() && host != launch.host_ports.end()) public_host_ports.insert(host->second);
    }
    GPUAAS_ASSIGN_OR_RETURN(
        spec.netns_path,
        options.networks->Create(dir.string(), host_to_port, public_host_ports, w.deny_egress()));
  }
  GPUAAS_ASSIGN_OR_RETURN(nlohmann::json config, BuildOciSpec(spec));
  std::error_code ec;
  fs::create_directories(dir / "bundle", ec);
  {
    // Holds the workload's environment (its secrets): root's alone.
    std::ofstream out(dir / "bundle" / "config.json", std::ios::trunc);
    out << config.dump();
    if (!out) return absl::InternalError("cannot write the bundle's config.json");
  }
  chmod((dir / "bundle" / "config.json").c_str(), 0600);
  fs::create_directories(RuncRoot(runtime_root), ec);
  return PreparedContainer{.shim_args = {"--runc", options.runc_path, "--runc-root",
                                         RuncRoot(runtime_root), "--container", w.workload_id()}};
}

absl::Status ReleaseContainer(const ContainerOptions& options, const std::string& dir_path) {
  const fs::path dir = dir_path;
  absl::Status status;
  // What a shim killed outright left running (runc is a no-op for a container already gone).
  if (fs::exists(RuncRoot(dir.parent_path().string()) + "/" + dir.filename().string())) {
    std::system(absl::StrCat(options.runc_path, " --root ", RuncRoot(dir.parent_path().string()),
                             " delete --force ", dir.filename().string(), " >/dev/null 2>&1")
                    .c_str());
  }
  if (options.networks != nullptr) status.Update(options.networks->Destroy(dir_path));
  std::error_code ec;
  for (const auto& m : fs::directory_iterator(dir / "mounts", ec)) {
    if (IsMountPoint(m.path()) && umount2(m.path().c_str(), MNT_DETACH) != 0) {
      status.Update(
          absl::InternalError(absl::StrCat("umount ", m.path().string(), ": ", strerror(errno))));
    }
  }
  // Last: it removes the directories only once nothing is mounted under the workload's.
  status.Update(UnmountRootfs(dir_path));
  return status;
}

}  // namespace gpuaas::agent

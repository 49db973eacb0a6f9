#include "services/agent/container_setup.h"

#include <openssl/evp.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "libs/common/status_macros.h"
#include "services/agent/images/skopeo_copy.h"

namespace gpuaas::agent {
namespace {

namespace fs = std::filesystem;
namespace pb = ::gpuaas::instance::v1;

std::string Sha256Hex(const std::string& bytes) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  EVP_Digest(bytes.data(), bytes.size(), digest, &length, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<char*>(digest), length));
}

// The image store, and who may use what is in it. The cache is the node's: an image a tenant
// pulled with its registry login stays, and another tenant naming the same digest would get
// it from the cache without ever showing a login. So a tenant's first use of an image on this
// node asks the registry for the manifest with that tenant's login (a few hundred bytes; the
// layers never move again), and what it may use is kept in <root>/access/<digest hex>.
class StoreImages final : public ContainerImages {
 public:
  StoreImages(std::shared_ptr<ImageStore> store, std::string root,
              registry::RegistryPolicy registries, absl::Duration timeout)
      : store_(std::move(store)),
        root_(std::move(root)),
        registries_(std::move(registries)),
        timeout_(timeout) {
    fs::create_directories(fs::path(root_) / "access");
  }

  absl::StatusOr<ContainerImage> Pull(
      const pb::Workload& w, const std::function<void(const std::string&)>& progress) override {
    const std::string& ref = w.image_reference();
    const size_t at = ref.rfind("@sha256:");
    if (at == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("image_reference: \"", ref, "\" is not pinned by a digest"));
    }
    const std::string hex = ref.substr(at + 8);
    // The registry's addresses before skopeo reaches it (registry_policy.h): a tenant's
    // reference never makes the node connect to its own loopback, its LAN or metadata.
    GPUAAS_RETURN_IF_ERROR(registries_.CheckReference(ref));
    std::optional<RegistryLogin> login;
    if (!w.registry_credentials().username().empty()) {
      login =
          RegistryLogin{w.registry_credentials().username(), w.registry_credentials().password()};
    }
    if (!MayUse(w.tenant_id(), hex)) GPUAAS_RETURN_IF_ERROR(Verify(ref, hex, login));
    int last_layers = -1;
    GPUAAS_ASSIGN_OR_RETURN(
        PulledImage pulled,
        store_->Pull(ref, w.tenant_id(), login ? &*login : nullptr, [&](const PullProgress& p) {
          // A line per layer, not per chunk: each becomes an instance event.
          if (p.layers_done == last_layers) return;
          last_layers = p.layers_done;
          progress(absl::StrFormat("%d of %d layers, %d of %d MB", p.layers_done, p.layers_total,
                                   p.bytes_done >> 20, p.bytes_total >> 20));
        }));
    Allow(w.tenant_id(), hex);
    return ContainerImage{.digest = pulled.digest,
                          .layer_dirs = pulled.layer_dirs,
                          .process = {.env = pulled.config.env,
                                      .entrypoint = pulled.config.entrypoint,
                                      .cmd = pulled.config.cmd,
                                      .working_dir = pulled.config.working_dir,
                                      .user = pulled.config.user}};
  }

 private:
  fs::path AccessFile(const std::string& hex) const { return fs::path(root_) / "access" / hex; }

  bool MayUse(const std::string& tenant, const std::string& hex) {
    std::lock_guard<std::mutex> lock(mu_);
    std::ifstream in(AccessFile(hex));
    for (std::string line; std::getline(in, line);) {
      if (line == tenant) return true;
    }
    return false;
  }
  void Allow(const std::string& tenant, const std::string& hex) {
    std::lock_guard<std::mutex> lock(mu_);
    std::ofstream(AccessFile(hex), std::ios::app) << tenant << "\n";
  }

  // The registry serves this tenant the manifest that the digest names (with its login, or
  // none). Its bytes are hashed here: skopeo 1.9 does not check that what a registry returns
  // for a digest reference has that digest, so a tenant's own registry could otherwise vouch
  // for any image in the node's cache, another tenant's private one included.
  absl::Status Verify(const std::string& ref, const std::string& hex,
                      const std::optional<RegistryLogin>& login) {
    const fs::path dir = fs::path(root_) / "verify" / std::to_string(++verifications_);
    std::error_code ec;
    fs::create_directories(dir, ec);
    chmod(dir.c_str(), 0700);
    SkopeoOptions options{.skopeo_path = "/usr/bin/skopeo",
                          .private_dir = dir.string(),
                          .tls_verify = registries_.VerifiesTls(ref),
                          .timeout = timeout_};
    absl::Status status;
    if (login) {
      absl::StatusOr<std::string> auth = WriteAuthFile(dir.string(), ref, *login);
      if (auth.ok()) options.auth_file = *auth;
      status = auth.status();
    }
    if (status.ok()) {
      absl::StatusOr<std::string> manifest = SkopeoInspectRaw(options, ref);
      status = manifest.status();
      if (status.ok() && Sha256Hex(*manifest) != hex) {
        status = absl::PermissionDeniedError(
            absl::StrCat("unauthorized: the registry's manifest for ", ref, " is not that digest"));
      }
    }
    fs::remove_all(dir, ec);
    return status;
  }

  const std::shared_ptr<ImageStore> store_;
  const std::string root_;
  const registry::RegistryPolicy registries_;
  const absl::Duration timeout_;
  std::mutex mu_;
  std::atomic<uint64_t> verifications_{0};
};

class NodeNetworks final : public ContainerNetworks {
 public:
  // `access`: where ports are forwarded and the proxies' sources (its public ports are set per
  // workload).
  explicit NodeNetworks(PortAccess access = {}) : access_(std::move(access)) {}
  absl::StatusOr<std::string> Create(const std::string& dir, const std::map<int, int>& ports,
                                     const std::set<int>& public_host_ports,
                                     bool deny_egress) override {
    PortAccess access = access_;
    access.public_host_ports = public_host_ports;
    GPUAAS_RETURN_IF_ERROR(CreateWorkloadNetwork(dir, ports, deny_egress, access));
    return NetnsPath(dir);
  }
  absl::Status Destroy(const std::string& dir) override { return DestroyWorkloadNetwork(dir); }

 private:
  const PortAccess access_;
};

// An image's LD_LIBRARY_PATH stays, after the driver's (MergeGpuEnv); the runtime's variables
// win over the image's, so the merged value is what the injection hands over.
GpuInjector MakeGpuInjector(const ContainerSetup& setup) {
  return [host = setup.gpu_host, mig = setup.mig,
          minors = setup.gpu_minor](const pb::Workload& w) -> absl::StatusOr<ContainerGpus> {
    const std::vector<std::string> uuids(w.gpu_uuids().begin(), w.gpu_uuids().end());
    GPUAAS_ASSIGN_OR_RETURN(GpuInjection injection,
                            InjectGpus(host, uuids, minors, w.mig_partition(), mig.get()));
    ContainerGpus out;
    for (const DeviceNode& d : injection.devices) {
      out.devices.push_back({.host_path = d.host_path,
                             .container_path = d.path,
                             .type = d.type,
                             .major = d.major,
                             .minor = d.minor});
    }
    for (const HostBind& b : injection.binds) {
      out.binds.push_back({b.host_path, b.container_path, b.read_only});
    }
    out.env = injection.env;
    return out;
  };
}

}  // namespace

absl::StatusOr<ContainerOptions> MakeContainerOptions(const ContainerSetup& setup,
                                                      std::shared_ptr<ImageStore>* store) {
  GPUAAS_ASSIGN_OR_RETURN(std::unique_ptr<ImageStore> opened,
                          ImageStore::Open({.root = setup.image_root,
                                            .size_limit_bytes = setup.image_cache_bytes,
                                            .registries = setup.registries,
                                            .pull_timeout = setup.pull_timeout,
                                            .unpacker_path = setup.unpacker_path,
                                            .unpacker_memory_bytes = setup.unpacker_memory_bytes,
                                            .limits = setup.unpack_limits}));
  *store = std::move(opened);
  GPUAAS_RETURN_IF_ERROR(PrepareNodeNetwork(setup.lan_allowed));
  // What a node that lost its workloads' shims at once (a crash) left behind.
  DropUnheldForwards();
  ContainerOptions options;
  options.images =
      std::make_shared<StoreImages>(*store, setup.image_root, setup.registries, setup.pull_timeout);
  // The node itself (the agent's readiness probes) connects to the advertised address from it.
  PortAccess access{.address = setup.forward_address, .proxy_sources = setup.proxy_sources};
  if (std::find(access.proxy_sources.begin(), access.proxy_sources.end(), access.address) ==
      access.proxy_sources.end()) {
    access.proxy_sources.push_back(access.address);
  }
  if (absl::Status s = CheckPortAccess(access); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--advertise-address/--proxy-source: ", s.message()));
  }
  if (!setup.workload_root.empty()) BindUnboundForwards(setup.workload_root, access);
  options.networks = std::make_shared<NodeNetworks>(access);
  options.gpus = MakeGpuInjector(setup);
  options.probe_address = setup.forward_address;
  return options;
}

void ForceEndContainers(const std::string& workload_root, const std::string& runc_path) {
  ContainerOptions containers;
  containers.runc_path = runc_path;
  containers.networks = std::make_shared<NodeNetworks>();
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(workload_root, ec)) {
    if (fs::exists(dir.path() / "container")) {
      ReleaseContainer(containers, dir.path().string()).IgnoreError();
    }
  }
  // Whatever is still mounted under the root, deepest first: a rootfs before its layers.
  std::vector<std::string> points;
  std::ifstream in("/proc/self/mountinfo");
  const std::string prefix = fs::path(workload_root).lexically_normal().string() + "/";
  for (std::string line; std::getline(in, line);) {
    std::istringstream fields(line);
    std::string field, point;
    for (int i = 0; i < 5 && fields >> field; ++i) point = field;
    if (point.rfind(prefix, 0) == 0) points.push_back(point);
  }
  std::sort(points.rbegin(), points.rend());
  for (const std::string& point : points) umount2(point.c_str(), MNT_DETACH);
}

std::set<std::string> ImagesInUse(const std::string& workload_root) {
  std::set<std::string> in_use;
  std::error_code ec;
  for (const auto& dir : fs::directory_iterator(workload_root, ec)) {
    std::ifstream in(dir.path() / "image");
    std::string digest;
    if (in >> digest) in_use.insert(digest);
  }
  return in_use;
}

}  // namespace gpuaas::agent

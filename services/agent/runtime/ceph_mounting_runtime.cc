#include "services/agent/runtime/ceph_mounting_runtime.h"

#include <filesystem>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "services/agent/runtime/ceph_fuse.h"

namespace gpuaas::agent {
namespace {

namespace pb = ::gpuaas::instance::v1;

bool HasCephMount(const pb::Workload& w) {
  for (const pb::Mount& m : w.mounts()) {
    if (!m.ceph().client_id().empty()) return true;
  }
  return false;
}

}  // namespace

CephMounter CephFuseMounter(std::string keyring_dir) {
  return CephMounter{
      .mount =
          [keyring_dir](const pb::CephVolume& v, const std::string& key,
                        const std::string& mountpoint) {
            std::error_code ec;
            std::filesystem::create_directories(keyring_dir, ec);
            std::filesystem::permissions(keyring_dir, std::filesystem::perms::owner_all, ec);
            CephFuseSource source{.monitors = {v.monitors().begin(), v.monitors().end()},
                                  .fs_name = v.fs_name(),
                                  .path = v.path(),
                                  .client_id = v.client_id()};
            return MountCephFuse(source, key, keyring_dir, mountpoint);
          },
      .unmount = [](const std::string& mountpoint) { return UnmountCephFuse(mountpoint); }};
}

CephMountingRuntime::CephMountingRuntime(std::unique_ptr<Runtime> inner, CephKeyFetch fetch,
                                         CephMounter mounter, std::string mount_root)
    : inner_(std::move(inner)),
      fetch_(std::move(fetch)),
      mounter_(std::move(mounter)),
      mount_root_(std::move(mount_root)) {}

std::string CephMountingRuntime::WorkloadDir(std::string_view workload_id) const {
  return mount_root_ + "/" + std::string(workload_id);
}

absl::Status CephMountingRuntime::Start(const pb::Workload& workload) {
  if (!HasCephMount(workload)) return inner_->Start(workload);
  for (const pb::WorkloadStatus& known : inner_->List()) {
    // Already started (or finished): the inner runtime leaves it as it is, its mounts too.
    if (known.workload_id() == workload.workload_id()) return inner_->Start(workload);
  }
  // Workload ids come from the control plane; a path separator would leave mount_root.
  if (workload.workload_id().empty() ||
      workload.workload_id().find_first_of("/\0", 0, 2) != std::string::npos ||
      workload.workload_id() == "." || workload.workload_id() == "..") {
    return absl::InvalidArgumentError("workload_id is not a plain name");
  }
  pb::Workload local = workload;
  int n = 0;
  for (pb::Mount& m : *local.mutable_mounts()) {
    if (m.ceph().client_id().empty()) continue;
    const std::string mountpoint = absl::StrCat(WorkloadDir(workload.workload_id()), "/", n++);
    absl::StatusOr<CephKey> key = fetch_(m.ceph().storage_id(), workload.instance_id());
    absl::Status mounted = key.status();
    if (key.ok() && key->client_id != m.ceph().client_id()) {
      mounted = absl::FailedPreconditionError("the storage service's key is of another cephx id");
    }
    if (mounted.ok()) mounted = mounter_.mount(m.ceph(), key->key, mountpoint);
    if (!mounted.ok()) {
      UnmountAll(workload.workload_id());
      return absl::Status(mounted.code(), absl::StrCat("mounting storage ", m.ceph().storage_id(),
                                                       ": ", mounted.message()));
    }
    m.set_host_path(mountpoint);
    m.clear_ceph();
  }
  absl::Status started = inner_->Start(local);
  if (!started.ok()) {
    // A failed start is listed FAILED (and removed later), unless the runtime never took it.
    bool listed = false;
    for (const pb::WorkloadStatus& s : inner_->List()) {
      listed = listed || s.workload_id() == workload.workload_id();
    }
    if (!listed) UnmountAll(workload.workload_id());
  }
  return started;
}

absl::Status CephMountingRuntime::Stop(std::string_view workload_id) {
  return inner_->Stop(workload_id);
}

absl::Status CephMountingRuntime::Remove(std::string_view workload_id) {
  absl::Status removed = inner_->Remove(workload_id);
  if (!removed.ok()) return removed;  // still running: its mounts stay
  UnmountAll(workload_id);
  return absl::OkStatus();
}

std::vector<pb::WorkloadStatus> CephMountingRuntime::List() const { return inner_->List(); }

void CephMountingRuntime::OnChange(std::function<void()> changed) {
  inner_->OnChange(std::move(changed));
}

void CephMountingRuntime::UnmountAll(std::string_view workload_id) {
  const std::filesystem::path dir = WorkloadDir(workload_id);
  std::error_code ec;
  if (!std::filesystem::is_directory(dir, ec)) return;
  // Not a recursive walk: below each entry is a tenant's storage, which is never deleted here.
  for (const std::filesystem::directory_entry& e : std::filesystem::directory_iterator(dir, ec)) {
    (void)mounter_.unmount(e.path().string());
  }
  std::filesystem::remove(dir, ec);
}

}  // namespace gpuaas::agent

// A Runtime in front of another that mounts a workload's CephFS storages (issue 33) before
// the workload starts, and unmounts them once it is removed. The inner runtime sees plain host
// directories (Mount.host_path = the ceph-fuse mountpoint), and binds them, with sub_path
// opened beneath without following symlinks, as it binds a local storage.
//
// The key of each mount is fetched right before it is mounted, with the node's own credential
// (StorageService.GetMountCredential answers only the node the attachment is on), kept in a
// 0600 keyring while ceph-fuse starts, and dropped: the agent stores no key, and a detached
// storage's key is revoked (the storage service evicts its mounts).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "services/agent/runtime/runtime.h"

namespace gpuaas::agent {

// The secret of an attachment's cephx id: {client_id, key}.
struct CephKey {
  std::string client_id;
  std::string key;
};
// Asks the storage service for the key of (storage_id, instance_id)'s attachment. Blocks.
using CephKeyFetch = std::function<absl::StatusOr<CephKey>(const std::string& storage_id,
                                                           const std::string& instance_id)>;
// Mounts and unmounts (MountCephFuse, UnmountCephFuse; fakes in tests).
struct CephMounter {
  std::function<absl::Status(const instance::v1::CephVolume& volume, const std::string& key,
                             const std::string& mountpoint)>
      mount;
  std::function<absl::Status(const std::string& mountpoint)> unmount;
};

// The real mounter: ceph-fuse (ceph_fuse.h), its keyrings in `keyring_dir` (made 0700).
CephMounter CephFuseMounter(std::string keyring_dir);

class CephMountingRuntime final : public Runtime {
 public:
  // `mount_root`: where the mountpoints go (<mount_root>/<workload_id>/<n>), on the node, not
  // reachable by workloads except through their binds. `inner` runs the workloads.
  CephMountingRuntime(std::unique_ptr<Runtime> inner, CephKeyFetch fetch, CephMounter mounter,
                      std::string mount_root);

  // Mounts every ceph Mount of a workload the inner runtime does not know yet (a repeated
  // Start of a known one is passed on unchanged), then starts it. A key or mount that fails
  // fails the start (the error; nothing is left mounted). Blocks on the storage service and
  // ceph-fuse.
  absl::Status Start(const instance::v1::Workload& workload) override;
  absl::Status Stop(std::string_view workload_id) override;
  // Removes the workload from the inner runtime, then unmounts its storages (also those
  // mounted before an agent restart: they are found by their directory).
  absl::Status Remove(std::string_view workload_id) override;
  std::vector<instance::v1::WorkloadStatus> List() const override;
  void OnChange(std::function<void()> changed) override;

 private:
  std::string WorkloadDir(std::string_view workload_id) const;
  void UnmountAll(std::string_view workload_id);

  std::unique_ptr<Runtime> inner_;
  CephKeyFetch fetch_;
  CephMounter mounter_;
  std::string mount_root_;
};

}  // namespace gpuaas::agent

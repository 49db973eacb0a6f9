// CephFS subvolumes through the mgr's volumes module ("fs subvolume create/resize/rm/getpath/ls"
// and their snapshots), over the control plane's librados connection (ceph_mount/rados_mgr.h).
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/storage/ceph_mount/rados_mgr.h"

namespace gpuaas::storage::ceph {

// Where the cluster is and who this client is.
using ClusterOptions = ceph_mount::RadosConfig;

// Thread-safe (librados is). Calls block on the cluster.
class Subvolumes final {
 public:
  // The subvolumes of file system `fs_name`, over `mgr`, which outlives this.
  Subvolumes(ceph_mount::RadosMgr& mgr, std::string fs_name)
      : mgr_(mgr), fs_name_(std::move(fs_name)) {}

  // A subvolume of exactly `bytes` (its CephFS quota), mode 0755, namespace-isolated (its data
  // in a RADOS namespace of its own). Creating an existing one changes its size (Ceph's
  // semantics): callers check Path first.
  absl::Status Create(std::string_view name, int64_t bytes);
  // Sets the quota to `bytes`; never shrinks below what is stored (no_shrink).
  absl::Status Resize(std::string_view name, int64_t bytes);
  // Removes it and its data (the mgr purges in the background). OK when it does not exist.
  absl::Status Remove(std::string_view name);
  // Its path in the file system ("/volumes/_nogroup/<name>/<uuid>"). NOT_FOUND when missing.
  absl::StatusOr<std::string> Path(std::string_view name);
  // The names of every subvolume in the default group.
  absl::StatusOr<std::vector<std::string>> List();

  // Snapshots ("fs subvolume snapshot ..."; subvolume_snapshots.cc). Errors as Ceph's: NOT_FOUND
  // (subvolume or snapshot). (Restores copy through the mount instead of `snapshot clone`:
  // ceph_backend.cc says why.)
  struct SnapshotDetails {
    int64_t bytes = 0;
    absl::Time created;
  };
  absl::Status CreateSnapshot(std::string_view name, std::string_view snapshot);
  absl::StatusOr<std::vector<std::string>> ListSnapshots(std::string_view name);
  absl::StatusOr<SnapshotDetails> SnapshotInfo(std::string_view name, std::string_view snapshot);
  absl::Status RemoveSnapshot(std::string_view name, std::string_view snapshot);

  const std::string& fs_name() const { return fs_name_; }

 private:
  absl::StatusOr<std::string> MgrCommand(const std::string& json, std::string_view what) {
    return mgr_.Command(json, what);
  }

  ceph_mount::RadosMgr& mgr_;
  const std::string fs_name_;
};

}  // namespace gpuaas::storage::ceph

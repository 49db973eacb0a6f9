// CephFS subvolumes through the mgr's volumes module ("fs subvolume create/resize/rm/getpath/ls"),
// sent over librados as mgr commands: the same commands the `ceph` CLI sends, without a process
// (and its ~0.7 s start) per call, and without a key on any command line.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuaas::storage::ceph {

struct ClusterOptions {
  std::string conf_path;     // ceph.conf: where the monitors are
  std::string keyring_path;  // the client's keyring file; the key is read by librados only
  std::string client_id = "admin";
  // Every command and the connection give up after this long (UNAVAILABLE).
  absl::Duration timeout = absl::Seconds(30);
};

// One librados connection. Thread-safe (librados is). Calls block on the cluster.
class Subvolumes final {
 public:
  // Connects. Errors: INVALID_ARGUMENT naming the option (unreadable conf or keyring),
  // UNAVAILABLE when the monitors do not answer within the timeout.
  static absl::StatusOr<std::unique_ptr<Subvolumes>> Connect(const ClusterOptions& options,
                                                             std::string fs_name);
  ~Subvolumes();
  Subvolumes(const Subvolumes&) = delete;
  Subvolumes& operator=(const Subvolumes&) = delete;

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

  // Sends one mgr command (a JSON object, as the `ceph` CLI builds it); its output, or its error
  // (the errno's code, Ceph's message) prefixed by `what`. For the volumes module's other
  // commands (subvolume authorize, info).
  absl::StatusOr<std::string> MgrCommand(const std::string& json, std::string_view what);

  const std::string& fs_name() const { return fs_name_; }

 private:
  Subvolumes(void* cluster, std::string fs_name)
      : cluster_(cluster), fs_name_(std::move(fs_name)) {}

  void* cluster_;  // rados_t
  const std::string fs_name_;
};

}  // namespace gpuaas::storage::ceph

// Evicting every CephFS client session of one cephx id, whatever directory it mounted: what
// RevokeMount needs beyond `fs subvolume evict`, which matches only clients whose mount root is
// exactly the subvolume's path, so a node that mounted a directory inside its subvolume (which
// its caps allow) would keep reading and writing after detach. The MDS blocklists an evicted
// client, so it cannot come back with the same session.
//
// Talks to the MDSs through libcephfs (ceph_mds_command, "session evict" with the filter
// auth_name=<id>), with the control plane's key: the storage service only.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services/storage/ceph_mount/rados_mgr.h"

namespace gpuaas::storage::ceph_mount {

class MdsSessions final {
 public:
  // Connects as `config.client_id` to the cluster (not mounting anything) and picks `fs_name`.
  // UNAVAILABLE when the cluster does not answer. Blocks (about 10 s at most).
  static absl::StatusOr<std::unique_ptr<MdsSessions>> Connect(const RadosConfig& config,
                                                              std::string_view fs_name);
  ~MdsSessions();
  MdsSessions(const MdsSessions&) = delete;
  MdsSessions& operator=(const MdsSessions&) = delete;

  // Evicts the sessions of client.<auth_id> on every active MDS of the file system; OK when it
  // has none. `auth_id` must be [a-z0-9-] (INVALID_ARGUMENT otherwise). Thread-safe; blocks.
  absl::Status EvictAuthId(std::string_view auth_id);

 private:
  explicit MdsSessions(void* cmount) : cmount_(cmount) {}
  void* cmount_;  // struct ceph_mount_info*
};

}  // namespace gpuaas::storage::ceph_mount

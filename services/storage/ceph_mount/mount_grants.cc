#include "services/storage/ceph_mount/mount_grants.h"

#include <utility>

namespace gpuaas::storage::ceph_mount {

absl::StatusOr<std::unique_ptr<MountGrants>> MountGrants::Connect(RadosMgr& mgr,
                                                                  const RadosConfig& config,
                                                                  const std::string& fs_name) {
  std::unique_ptr<MountGrants> grants(new MountGrants(mgr));
  absl::StatusOr<std::unique_ptr<MdsSessions>> sessions = MdsSessions::Connect(config, fs_name);
  if (!sessions.ok()) return sessions.status();
  grants->sessions_ = *std::move(sessions);
  RadosMgr* rados = grants->mgr_;
  MdsSessions* mds = grants->sessions_.get();
  grants->credentials_ = std::make_unique<MountCredentials>(
      [rados](std::string_view json) { return rados->Command(json); },
      [mds](std::string_view auth_id) { return mds->EvictAuthId(auth_id); }, fs_name);
  return grants;
}

}  // namespace gpuaas::storage::ceph_mount

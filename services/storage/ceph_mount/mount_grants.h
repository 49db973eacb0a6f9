// MountCredentials over the backend's librados connection (the mgr's volumes module) and a
// libcephfs one of its own for the MDSs' session evictions, both as the control plane's client
// (its key stays in this process). CephBackend's GrantMount and RevokeMount forward to
// credentials(); its MountSourceFor names monitors() to nodes.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/storage/ceph_mount/mds_sessions.h"
#include "services/storage/ceph_mount/mount_credentials.h"
#include "services/storage/ceph_mount/rados_mgr.h"

namespace gpuaas::storage::ceph_mount {

class MountGrants final {
 public:
  // Connects to the MDSs as `config` says; `mgr` (the same client's) outlives this.
  // UNAVAILABLE when the cluster does not answer. Blocks (up to the config's timeout).
  static absl::StatusOr<std::unique_ptr<MountGrants>> Connect(RadosMgr& mgr,
                                                              const RadosConfig& config,
                                                              const std::string& fs_name);

  MountCredentials& credentials() { return *credentials_; }
  // The monitors' addresses as clients reach them (CephMount.monitors).
  std::vector<std::string> monitors() const { return {mgr_->MonHost()}; }

 private:
  explicit MountGrants(RadosMgr& mgr) : mgr_(&mgr) {}
  RadosMgr* mgr_;
  std::unique_ptr<MdsSessions> sessions_;
  std::unique_ptr<MountCredentials> credentials_;
};

}  // namespace gpuaas::storage::ceph_mount

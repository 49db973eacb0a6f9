// A librados connection that sends mgr commands: the MgrCommand of MountCredentials for the
// control plane and the tests. It authenticates with the keyring given (the admin's, in the
// storage service), which therefore stays in the process that opened it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::storage::ceph_mount {

struct RadosConfig {
  std::string conf_path;     // ceph.conf (its mon host)
  std::string keyring_path;  // the keyring of client_id
  std::string client_id;     // without "client.", e.g. "admin"
};

class RadosMgr final {
 public:
  // Connects; UNAVAILABLE when the cluster does not answer in time, INVALID_ARGUMENT for a bad
  // configuration. Blocks (at most about 10 s).
  static absl::StatusOr<std::unique_ptr<RadosMgr>> Connect(const RadosConfig& config);
  ~RadosMgr();
  RadosMgr(const RadosMgr&) = delete;
  RadosMgr& operator=(const RadosMgr&) = delete;

  // One mgr command (JSON); its output buffer, or its errno as a Status. Thread-safe; blocks.
  absl::StatusOr<std::string> Command(std::string_view json);

  // The monitors' addresses as the configuration names them (mon_host), for clients to reach
  // the cluster (CephMount.monitors).
  std::string MonHost() const;

 private:
  explicit RadosMgr(void* cluster) : cluster_(cluster) {}
  void* cluster_;  // rados_t
};

}  // namespace gpuaas::storage::ceph_mount

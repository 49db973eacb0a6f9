// The control plane's one librados connection to a Ceph cluster, for mgr commands: the volumes
// module's subvolume, snapshot and authorize commands (ceph/subvolumes.h, mount_credentials.h)
// as the `ceph` CLI sends them, without a process per call and without a key on any command
// line. It authenticates with the keyring given (the admin's, in the storage service), which
// therefore stays in the process that opened it.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuaas::storage::ceph_mount {

struct RadosConfig {
  std::string conf_path;            // ceph.conf: where the monitors are
  std::string keyring_path;         // the client's keyring file; the key is read by librados only
  std::string client_id = "admin";  // without "client."
  // Connecting and every command give up after this long (UNAVAILABLE).
  absl::Duration timeout = absl::Seconds(30);
};

// A librados or libcephfs return code (a negative errno) as a status: `what` failed, with Ceph's
// own message when it gave one.
absl::Status RadosErrorToStatus(int rc, std::string_view what, std::string_view message);

class RadosMgr final {
 public:
  // Connects. Errors: INVALID_ARGUMENT naming "conf", "keyring" or "client id" (unreadable, or
  // no usable key), UNAVAILABLE when the monitors do not answer within the timeout. Blocks.
  static absl::StatusOr<std::unique_ptr<RadosMgr>> Connect(const RadosConfig& config);
  ~RadosMgr();
  RadosMgr(const RadosMgr&) = delete;
  RadosMgr& operator=(const RadosMgr&) = delete;

  // One mgr command (a JSON object, as the `ceph` CLI builds it); its output, or its errno as a
  // status prefixed by `what`. Thread-safe (librados is); blocks.
  absl::StatusOr<std::string> Command(std::string_view json, std::string_view what = "mgr command");

  // The monitors' addresses as the configuration names them (mon_host), for clients to reach
  // the cluster (CephMount.monitors).
  std::string MonHost() const;

 private:
  explicit RadosMgr(void* cluster) : cluster_(cluster) {}
  void* cluster_;  // rados_t
};

}  // namespace gpuaas::storage::ceph_mount

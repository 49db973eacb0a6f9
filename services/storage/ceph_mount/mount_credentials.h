// Per-attachment cephx ids for CephFS subvolumes: what lets a node mount exactly the volumes its
// instances have attached, and nothing else (issue 33). The ceph backend's GrantMount and
// RevokeMount are these.
//
// An attachment's id is `gpuaas-att-<attachment_id>`; the mgr's volumes module makes it with
// caps for one subvolume's path (`fs subvolume authorize`), so it cannot mount another
// subvolume or the file system's root. Revoking removes those caps (`fs subvolume deauthorize`,
// which deletes the id once it has no other subvolume) and evicts the clients already mounted
// with it, which the MDS then blocklists: a ceph-fuse mount made before detach stops reading and
// writing at detach. `fs subvolume evict` alone is not enough: it evicts only clients whose
// mount root is the subvolume's path exactly, and the caps let a node mount any directory
// inside it; so every session of the id is evicted (mds_sessions.h).
//
// The ceph backend must make each volume namespace-isolated (`fs subvolume create ...
// --namespace-isolated`, JSON "namespace_isolated": true): authorize then limits the id's OSD
// cap to that volume's RADOS namespace. Without it the cap is the whole data pool ("allow rw
// pool=gpuaas.data"), and a node could read and write every tenant's file data through librados
// around the MDS (tests/security/ceph_mount_attack_test writes to another volume's namespace).
//
// Only the control plane runs this: it talks to the mgr with the admin key. Nothing here logs
// or returns a secret except GrantMount's answer, for the storage service to hand to the node.
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "services/storage/backend.h"
#include "services/storage/ceph_mount/rados_mgr.h"

namespace gpuaas::storage::ceph_mount {

// Sends one mgr command (its JSON, as `ceph` builds it) and answers its output buffer; an error
// carries the command's errno as the status code (RadosErrorToStatus) and the mgr's message.
// Blocks until the mgr answers.
using MgrCommand = std::function<absl::StatusOr<std::string>(std::string_view json)>;
// Evicts every MDS session of a cephx id (MdsSessions::EvictAuthId). Blocks.
using EvictSessions = std::function<absl::Status(std::string_view auth_id)>;

// "gpuaas-att-" + attachment_id: the cephx id (without "client.") of an attachment.
std::string CephClientId(std::string_view attachment_id);

class MountCredentials final {
 public:
  // `fs_name`: the CephFS volume ("gpuaas"); subvolumes are in the default group.
  MountCredentials(MgrCommand mgr, EvictSessions evict, std::string fs_name);

  // Makes (or finds again) the attachment's cephx id with access to `volume_id`'s subvolume only
  // ("rw", or "r" when read_only) and answers its key. `attachment_id`: [a-z0-9-], 1 to 64
  // characters, else INVALID_ARGUMENT. NOT_FOUND when the subvolume does not exist; the mgr's
  // other errors as RadosErrorToStatus maps them. Blocks on the mgr.
  absl::StatusOr<MountCredential> Grant(std::string_view volume_id, std::string_view attachment_id,
                                        bool read_only);

  // Removes the id's access to the subvolume and evicts the clients mounted with it, those that
  // mounted a directory inside it too. OK when the id or the subvolume is gone already (a
  // retry, a deleted storage). Blocks on the mgr and the MDSs.
  absl::Status Revoke(std::string_view volume_id, std::string_view attachment_id);

 private:
  MgrCommand mgr_;
  EvictSessions evict_;
  std::string fs_name_;
};

}  // namespace gpuaas::storage::ceph_mount

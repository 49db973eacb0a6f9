// The ceph backend: every storage is a CephFS subvolume (named by its volume_id) whose size is
// its CephFS quota, so any host can mount it and any replica of the storage service can serve
// it. Subvolumes are created, grown and removed through the mgr's volumes module (subvolumes.h);
// their bytes are served by the local backend's volume code on this process's ceph-fuse mount
// of the file system (fuse_mount.h). Inside a subvolume:
//
//   data/                  exactly the user's files; what a workload mounts
//   .staging/              files being written, renamed into data/ when complete
//   .uploads/<upload_id>/  multipart uploads (local/upload_store.h)
//
// All of it lives in the cluster, inside the quota: a replica keeps nothing of its own, so an
// upload one replica began another can continue or complete, and a writer past the size gets
// EDQUOT from CephFS whichever replica it writes through (RESOURCE_EXHAUSTED; the staged file is
// dropped, no partial object). Usage comes from CephFS's recursive counters (ceph.dir.rbytes,
// ceph.dir.rfiles) of the subvolume. See README.md for what the quota does and does not promise.
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "services/storage/backend.h"
#include "services/storage/ceph/subvolumes.h"

namespace gpuaas::storage::ceph {

struct CephBackendOptions {
  ClusterOptions cluster;
  std::string fs_name = "gpuaas";
  // Where this process mounts the file system (made when missing; unmounted when the backend
  // goes). Private to one process: two replicas on one host need two.
  std::string mount_point;
  // As the local backend's: fsync each new file and its directory before a write returns.
  bool sync_writes = true;
};

// Connects to the cluster, checks that the file system exists and mounts it. Errors:
// INVALID_ARGUMENT naming the option (empty or unreadable conf, keyring; no such file system),
// UNAVAILABLE (the cluster does not answer), FAILED_PRECONDITION (ceph-fuse missing or failing).
// Blocks.
absl::StatusOr<std::unique_ptr<Backend>> NewCephBackend(const CephBackendOptions& options);

}  // namespace gpuaas::storage::ceph

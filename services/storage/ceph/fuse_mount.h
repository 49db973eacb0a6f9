// The storage service's own mount of the whole CephFS, through ceph-fuse (this kernel has no
// CephFS client), so that the local backend's volume code serves each subvolume's directory.
// The key stays in the keyring file: ceph-fuse gets the file's path, never the key.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "services/storage/ceph/subvolumes.h"

namespace gpuaas::storage::ceph {

class FuseMount final {
 public:
  // Mounts file system `fs_name` on `mount_point` (made when missing) with a ceph-fuse process of
  // this one's (foreground, its output in `mount_point`.log), and returns once the mount is
  // there. A mount left there by a process that died is detached first. Errors:
  // FAILED_PRECONDITION (ceph-fuse missing, or exited: its log says why), UNAVAILABLE (no mount
  // within the options' timeout). Blocks.
  static absl::StatusOr<std::unique_ptr<FuseMount>> Mount(const ClusterOptions& options,
                                                          const std::string& fs_name,
                                                          const std::string& mount_point);
  // Unmounts (lazily: files still open keep it until they close) and reaps ceph-fuse.
  ~FuseMount();
  FuseMount(const FuseMount&) = delete;
  FuseMount& operator=(const FuseMount&) = delete;

  const std::string& path() const { return path_; }

 private:
  FuseMount(std::string path, pid_t pid) : path_(std::move(path)), pid_(pid) {}

  const std::string path_;
  const pid_t pid_;
};

}  // namespace gpuaas::storage::ceph

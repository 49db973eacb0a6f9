// CephFS's directory quotas and recursive statistics, read and set as the virtual xattrs
// ceph.quota.* and ceph.dir.r* on an open directory of a CephFS mount.
#pragma once

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::ceph {

// Bytes (ceph.dir.rbytes) and files (ceph.dir.rfiles) beneath the directory. The MDS propagates
// them lazily (about a second behind the last write).
absl::StatusOr<VolumeUsage> ReadRecursiveUsage(int dir_fd);

// The directory's quota (ceph.quota.max_bytes / max_files); 0 is none.
absl::StatusOr<int64_t> ReadQuota(int dir_fd, std::string_view name);
// Sets ceph.quota.<name> ("max_bytes" or "max_files"); 0 removes it.
absl::Status WriteQuota(int dir_fd, std::string_view name, int64_t value);

}  // namespace gpuaas::storage::ceph

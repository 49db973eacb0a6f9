// The local backend: every storage is a directory under one data root on this host, which is
// also what an instance mounts. See data_root.h for the layout and local_volume.h for what a
// volume guarantees (limits that concurrent writers cannot pass together, atomic publication,
// no path ever resolved through a symlink).
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::local {

enum class VolumeFilesystem { kDirectory, kLoopExt4 };

struct LocalBackendOptions {
  // Created when missing. One backend at a time per data root (a lock file says so).
  std::string data_root;
  // fsync each new file and the directories its name lands in before a write returns. Off is
  // for tests and benchmarks only: a power cut may then lose acknowledged writes.
  bool sync_writes = true;
  // How a new volume is kept. kLoopExt4 gives each its own ext4 file system (a sparse image of
  // the volume's size, loop-mounted), so that the kernel stops every writer at the size;
  // kDirectory is a plain directory whose size only S3 writes respect (a workload writing
  // through its mount is counted at detach). Existing volumes keep the way they were made.
  VolumeFilesystem volume_filesystem = VolumeFilesystem::kDirectory;
};

// The --volume-filesystem names: "loop-ext4", "directory".
absl::StatusOr<VolumeFilesystem> ParseVolumeFilesystem(std::string_view name);

// Opens the data root: creates its layout, takes its lock, and finishes what a crash
// interrupted (removes staged files, volumes in the trash, half-created uploads and the uploads
// of deleted volumes) and mounts the volumes that have their own file system (the backend
// unmounts them when destroyed). Errors: INVALID_ARGUMENT for an empty data_root,
// FAILED_PRECONDITION when another backend holds the data root, its directories span file
// systems, or kLoopExt4 cannot work here (not root, no loop devices). Blocks on disk I/O.
absl::StatusOr<std::unique_ptr<Backend>> NewLocalBackend(const LocalBackendOptions& options);

}  // namespace gpuaas::storage::local

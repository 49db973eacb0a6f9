// The local backend: every storage is a directory under one data root on this host, which is
// also what an instance mounts. See data_root.h for the layout and local_volume.h for what a
// volume guarantees (limits that concurrent writers cannot pass together, atomic publication,
// no path ever resolved through a symlink).
#pragma once

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::local {

struct LocalBackendOptions {
  // Created when missing. One backend at a time per data root (a lock file says so).
  std::string data_root;
  // fsync each new file and the directories its name lands in before a write returns. Off is
  // for tests and benchmarks only: a power cut may then lose acknowledged writes.
  bool sync_writes = true;
};

// Opens the data root: creates its layout, takes its lock, and finishes what a crash
// interrupted (removes staged files, volumes in the trash, half-created uploads and the uploads
// of deleted volumes). Errors: INVALID_ARGUMENT for an empty data_root, FAILED_PRECONDITION when
// another backend holds the data root or its directories span file systems. Blocks on disk I/O.
absl::StatusOr<std::unique_ptr<Backend>> NewLocalBackend(const LocalBackendOptions& options);

}  // namespace gpuaas::storage::local

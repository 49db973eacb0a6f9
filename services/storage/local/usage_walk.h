// Counting what a directory tree really holds, for a volume's usage at first open and on
// Recount (after a workload wrote through its mount).
#pragma once

#include "absl/status/statusor.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::local {

// Regular files beneath `dir_fd` and their sizes; symlinks are neither followed nor counted,
// nor are special files. Files that vanish during the walk are skipped. Blocks on disk I/O.
absl::StatusOr<VolumeUsage> CountTree(int dir_fd);

}  // namespace gpuaas::storage::local

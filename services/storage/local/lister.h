// ListObjects over a volume's directory tree: keys in byte order across directories, prefix,
// delimiter "/" with common prefixes, start_after that seeks (only subtrees that can hold
// greater keys are opened), and pages of up to 1,000.
//
// With a delimiter, a common prefix is returned only when some object lies beneath it (an
// empty directory left by a workload is not a prefix), and only when it sorts after
// start_after: a start_after inside a common prefix skips the rest of that prefix, which is what
// a continuation from it means.
#pragma once

#include "absl/status/statusor.h"
#include "services/storage/backend.h"
#include "services/storage/local/dir_listing.h"

namespace gpuaas::storage::local {

// INVALID_ARGUMENT naming the field: delimiter other than "" or "/", max_keys outside 1..1000.
absl::Status ValidateListRequest(const ListRequest& request);

// Lists the volume whose root directory is `root_fd`. Symlinks and special files are skipped,
// never followed; a prefix that passes through a symlink is PERMISSION_DENIED. Blocks on disk
// I/O; safe to call from many threads.
absl::StatusOr<ListResult> ListObjects(int root_fd, DirListingCache& cache,
                                       const ListRequest& request);

}  // namespace gpuaas::storage::local

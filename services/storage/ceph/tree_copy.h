// Copies a directory tree between two open directories, for restoring a snapshot into a new
// volume. The tree is a tenant's (a workload may have planted anything in it), so nothing is
// followed: symlinks are copied as symlinks, FIFOs, sockets and devices are skipped, and every
// open is relative to its parent's fd with O_NOFOLLOW.
#pragma once

#include "absl/status/status.h"

namespace gpuaas::storage::ceph {

// Copies what `from_fd` holds into `to_fd` (which should be empty): directories and files with
// their permission bits, symlinks as they are. Errors: RESOURCE_EXHAUSTED when the target's
// quota refuses a write (EDQUOT/ENOSPC); what failed otherwise. Blocks on disk I/O.
absl::Status CopyTree(int from_fd, int to_fd);

}  // namespace gpuaas::storage::ceph

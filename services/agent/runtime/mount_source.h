// A workload's mount source, opened so that nothing a workload wrote can redirect it. A storage
// is shared by every instance that mounts it, so one workload may plant a symlink where another
// instance's sub_path points; following it would bind (and, for a root agent, chown) whatever
// host directory the link names. The source is opened component by component beneath the
// storage's directory without following any symlink, and bwrap binds the open descriptor, so a
// rename between the check and the mount changes nothing.
#pragma once

#include <sys/types.h>

#include <string>

#include "absl/status/statusor.h"

namespace gpuaas::agent {

// An O_PATH|O_CLOEXEC descriptor of `base`/`sub_path` (sub_path relative, "" for base itself).
// base must exist (the storage service made it); missing directories below it are made, owned
// by uid:gid when the caller is root. Errors: FAILED_PRECONDITION naming the path when base is
// missing, or a part is a symlink, not a directory, or ".."/".".
absl::StatusOr<int> OpenMountSource(const std::string& base, const std::string& sub_path, uid_t uid,
                                    gid_t gid);

// Hands the directory `dirfd` and everything beneath it to uid:gid where another user owns it,
// never following a symlink (a link itself is re-owned, not its target).
void GiveTreeTo(int dirfd, uid_t uid, gid_t gid);

}  // namespace gpuaas::agent

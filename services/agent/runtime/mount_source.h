// A workload's mount source, opened so that nothing a workload wrote can redirect it. A storage
// is shared by every instance that mounts it, so one workload may plant a symlink where another
// instance's sub_path points; following it would bind (and, for a root agent, regroup) whatever
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

// Shares the directory `dirfd` and everything beneath it with the group `gid` (the tenant's,
// tenant_groups.h): each directory group-owned, setgid (so what is made in it is the group's
// too), rwx for the group and a default ACL that gives the group what the creator asks for
// itself whatever its umask (u::rwx g::rwx o::---); each file the group's with the owner's rights;
// nothing for others. Owners stay: every workload of the tenant writes through the group.
// Only what is wrong is changed, so on a tree already shared this costs one lstat per entry and
// writes nothing (files the S3 data plane renames in keep its group and mode, so a start still
// looks at every entry). Never follows a symlink, and leaves files with more than one link as
// they are (a hard link may name a file outside the storage). Root only.
void ShareTreeWith(int dirfd, gid_t gid);

}  // namespace gpuaas::agent

// A volume's own ext4 file system in a sparse image file, loop-mounted on the volume's
// directory, so that the kernel stops every writer (S3 and a workload's /data alike) at the
// volume's size with ENOSPC. The kernel here has no CONFIG_QUOTA, so ext4/xfs project quotas are
// not available; one small file system per volume needs only loop devices and mkfs.ext4.
//
// Needs root (CAP_SYS_ADMIN: loop devices, mount) and /dev/loop-control. Growing a mounted file
// system online (resize2fs on its loop device) needs CAP_SYS_RESOURCE too; without it (root in a
// container) a file system grows offline, while nothing else holds it.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "libs/common/files.h"

namespace gpuaas::storage::local {

// FAILED_PRECONDITION, saying what is missing, when this process cannot make, mount or grow
// loop-mounted ext4 images (not root, no /dev/loop-control, no mkfs.ext4).
absl::Status CheckLoopFilesystemUsable();

// Makes `image` (a new file; replaced if it exists) a sparse ext4 file system of exactly
// `bytes`, with no blocks reserved for root and inodes for at least `files` files.
absl::Status MakeFilesystemImage(const std::string& image, int64_t bytes, int64_t files);

// Mounts `image` on the directory `mount_point` (nosuid, nodev). When a loop device already
// serves the image (its file system is still in use after a restart, e.g. bound into a
// workload) that device is mounted again, so that one image is never two file systems. The loop
// device goes away by itself (autoclear) once the file system is unmounted everywhere. A file
// system smaller than its image (a growth that had to wait) is grown first when nothing holds it.
absl::Status MountFilesystemImage(const std::string& image, const std::string& mount_point);

// Detaches the mount on `path` (lazily: open files keep the file system until they close). OK
// when nothing is mounted there.
absl::Status UnmountFilesystem(const std::string& path);

// Whether the image's file system is smaller than the image: a growth waits for it to be free.
bool FilesystemGrowthPending(const std::string& image);

// Grows the file system of the image mounted on `mount_point` to `bytes` (the image first);
// nothing changes when it has that size already. Online when this process may (see above);
// otherwise, when `may_unmount` (the caller holds nothing open below `mount_point`), offline:
// unmounts `mount_point`, and if that released the file system (its loop device cleared itself,
// so no other mount, e.g. a workload's bind mount, holds it) resizes the image, then mounts it
// again. False: the file system is in use and keeps its size; the image is grown already, so the
// next mount with nothing holding it, or the next call, finishes the growth. Errors:
// FAILED_PRECONDITION (e2fsck or resize2fs failed; its output is in the log).
absl::StatusOr<bool> GrowFilesystemImage(const std::string& image, const std::string& mount_point,
                                         int64_t bytes, bool may_unmount);

}  // namespace gpuaas::storage::local

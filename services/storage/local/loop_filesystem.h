// A volume's own ext4 file system in a sparse image file, loop-mounted on the volume's
// directory, so that the kernel stops every writer (S3 and a workload's /data alike) at the
// volume's size with ENOSPC. The kernel here has no CONFIG_QUOTA, so ext4/xfs project quotas are
// not available; one small file system per volume needs only loop devices and mkfs.ext4.
//
// Needs root (CAP_SYS_ADMIN: loop devices, mount) and /dev/loop-control; growing a mounted file
// system (resize2fs online) also needs CAP_SYS_RESOURCE.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/status.h"

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
// device goes away by itself (autoclear) once the file system is unmounted everywhere.
absl::Status MountFilesystemImage(const std::string& image, const std::string& mount_point);

// Whether a file system is mounted exactly on `path` (its device differs from its parent's).
bool IsMountPoint(const std::string& path);

// Detaches the mount on `path` (lazily: open files keep the file system until they close). OK
// when nothing is mounted there.
absl::Status UnmountFilesystem(const std::string& path);

// Grows the image mounted on `mount_point` to `bytes` online (larger image, loop capacity,
// resize2fs). Nothing changes when `bytes` is not more than the image's size. Errors:
// FAILED_PRECONDITION (resize2fs refused, e.g. without CAP_SYS_RESOURCE; the file system keeps
// its size).
absl::Status GrowFilesystemImage(const std::string& image, const std::string& mount_point,
                                 int64_t bytes);

}  // namespace gpuaas::storage::local

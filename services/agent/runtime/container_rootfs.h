// A container's root file system: the image's layers, unpacked once per node and shared by every
// container of that image, under a writable layer of its own. Layers stay owned by the ids in
// the image (0 for root); each layer is mounted idmapped into the container's id block, so its
// root finds them its own while the files on disk never change, and overlayfs stacks them.
//
// Under the workload's directory:
//   lower/<i>    the idmapped mount of layer i        disk.img, disk/  its writable file system
//   rootfs/      the overlay runc starts in           (upper/ and work/ in disk/, or beside)
//   trees/<i>/   a tree of the plan: lower (idmapped), merged (an overlay; its upper and work
//                beside the rootfs's)
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "libs/common/files.h"

namespace gpuaas::agent {

struct RootfsPlan {
  std::string dir;                      // the workload's directory
  std::vector<std::string> layer_dirs;  // bottom first
  uint32_t id_base = 0;                 // host id of the container's 0
  uint32_t id_count = 65536;
  // The writable layer and /tmp together: an ext4 file system of this size of its own (sparse),
  // so a container filling it stops at its limit and not the node's disk. 0: no limit.
  int64_t disk_bytes = 0;
  // Host directories that are part of the image as whole trees (the node's /usr for workloads
  // without an image), each stacked like a layer under a writable one of its own, so the
  // container may add to them (the GPU driver's files) while the node's stay untouched.
  std::vector<std::string> trees;
};

struct MountedRootfs {
  std::string rootfs;
  std::vector<std::string> trees;  // where each of plan.trees is mounted, to bind in
};

// Mounts it all. Idempotent: what is mounted already stays.
absl::StatusOr<MountedRootfs> MountRootfs(const RootfsPlan& plan);

// Whether no mount point lies in or under `dir`: only then may it be removed, since a mount of a
// shared layer below it would take the layer's files with it.
bool NothingMountedUnder(const std::string& dir);

// Unmounts and removes what MountRootfs made under `dir`. Idempotent.
absl::Status UnmountRootfs(const std::string& dir);

}  // namespace gpuaas::agent

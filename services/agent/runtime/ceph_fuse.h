// Mounting a tenant's CephFS subvolume on the node (issue 33), for a workload to bind as it
// binds a local storage's host directory. The agent holds no cluster key of its own: the storage
// service hands it, per attachment, the key of a cephx id that reaches that one subvolume, and
// revokes it at detach.
//
// The key is written only to a 0600 keyring in the agent's private directory, for as long as
// ceph-fuse takes to start (it keeps the key in memory), and never reaches a command line, a
// log or the workload: its path is what ceph-fuse is given.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace gpuaas::agent {

// Where the subvolume is and whose it is (instance.v1.CephVolume); the secret is apart.
struct CephFuseSource {
  std::vector<std::string> monitors;  // "v2:10.0.0.1:3300", ...
  std::string fs_name;                // "gpuaas"
  std::string path;                   // the subvolume's path in the file system
  std::string client_id;              // without "client."
};

// Mounts `source` on `mountpoint` (made if missing) with ceph-fuse and returns once the mount
// is up. `keyring_dir` is a directory only the agent reads (0700); the keyring lives there
// while ceph-fuse starts and is removed whatever the outcome. Errors: INVALID_ARGUMENT (a field
// that is empty or could be read as an option), FAILED_PRECONDITION (ceph-fuse refused: a key
// that does not reach the path, revoked, cluster down; its exit status in the message),
// INTERNAL (files, processes). Blocks for ceph-fuse's start (up to `timeout_seconds`).
absl::Status MountCephFuse(const CephFuseSource& source, const std::string& key,
                           const std::string& keyring_dir, const std::string& mountpoint,
                           int timeout_seconds = 60);

// Unmounts (lazily: a workload still holding files cannot keep it) and removes the mountpoint
// directory. OK when nothing is mounted there. Root, or the user that mounted it. Blocks.
absl::Status UnmountCephFuse(const std::string& mountpoint);

}  // namespace gpuaas::agent

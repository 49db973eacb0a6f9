// Unpacks one OCI layer blob (a tar, uncompressed, gzip or zstd) into a directory in overlayfs
// lower-layer format, verifying the blob's sha256 as it streams. The tar is treated as hostile:
// nothing is ever written outside the layer directory.
#pragma once

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace gpuaas::agent {

// Unpacks `blob_path` into `dest_dir`, which must not exist: the layer is built in a temporary
// sibling directory and renamed into place, so a crash leaves no half layer. If another thread
// or process put `dest_dir` in place meanwhile, that one is kept. Returns the unpacked size
// (bytes of regular files). Blocks on disk I/O.
//
// Entries keep their owners, modes, mtimes, `user.*` and `security.capability` xattrs,
// symlinks and hardlinks (to earlier entries of the same layer). OCI whiteouts become overlayfs
// ones: `.wh.NAME` a 0/0 character device NAME, `.wh..wh..opq` the xattr
// trusted.overlay.opaque="y" on its directory. Device nodes and sockets are skipped.
//
// Errors: DATA_LOSS "digest mismatch: ..." when the bytes do not hash to `sha256_hex`;
// INVALID_ARGUMENT "unsafe layer: ..." for an entry that would escape the directory (absolute
// path, "..", a path through a symlink, a hardlink to outside) or a malformed tar;
// RESOURCE_EXHAUSTED "no space: ..." when the disk is full; INTERNAL for other I/O errors.
// On error nothing is left behind.
absl::StatusOr<int64_t> UnpackLayer(const std::string& blob_path, const std::string& sha256_hex,
                                    const std::string& dest_dir);

}  // namespace gpuaas::agent

// Unpacks one OCI layer blob (a tar, uncompressed, gzip or zstd) into a directory in overlayfs
// lower-layer format, verifying the blob's sha256 as it streams. The tar is treated as hostile:
// nothing is ever written outside the layer directory.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/statusor.h"
#include "services/agent/images/unpack_limits.h"

namespace gpuaas::agent {

// Unpacks `blob_path` into `layers_dir`/<sha256_hex>, which must not exist: the layer is built
// in a temporary directory beside it and renamed into place, so a crash leaves no half layer.
// If another thread or process put the layer in place meanwhile, that one is kept. Returns the
// unpacked size (bytes of regular files). Blocks on disk I/O.
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
                                    const std::string& layers_dir);

struct StreamedLayer {
  std::string hex;  // the sha256 of the bytes read
  int64_t size_bytes = 0;
  int64_t entries = 0;
};

// As UnpackLayer, within `limits` (the per-layer ones; RESOURCE_EXHAUSTED "unpack limit: ..."
// or "no space: ..." when one is crossed) and for a blob the manifest says is `blob_size`
// bytes (-1: unknown): a blob of another size is INVALID_ARGUMENT "layer size ...".
absl::StatusOr<StreamedLayer> UnpackLayerWithin(const std::string& blob_path,
                                                const std::string& sha256_hex, int64_t blob_size,
                                                const std::string& layers_dir,
                                                const UnpackLimits& limits);

// As UnpackLayer, for a blob still being downloaded into `blob_fd` by another process, so a
// layer unpacks while it downloads: at each end of the bytes written so far it asks `complete`
// whether the file is whole (true), may still grow (false; `complete` waits a little before
// answering) or was abandoned (an error, returned). The layer lands in `layers_dir`/<hex of the
// bytes read>; the caller checks that this is a layer it wants. A tar that fails to unpack ends
// the unpack at once (its digest is not known yet to tell corruption apart).
// `limits` as for UnpackLayerWithin; `max_blob_size` (-1: none) bounds the bytes read.
absl::StatusOr<StreamedLayer> UnpackGrowingLayer(
    int blob_fd, const std::function<absl::StatusOr<bool>()>& complete,
    const std::string& layers_dir, const UnpackLimits& limits = UnpackLimits(),
    int64_t max_blob_size = -1);

}  // namespace gpuaas::agent

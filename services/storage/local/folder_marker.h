// S3 folder markers: the zero-byte keys ending in "/" that the AWS console's "Create folder",
// s3fs and sync tools make. A volume keeps one as the directory itself, marked with the user
// xattr "user.gpuaas.folder": a directory made only on the way to a file is no object (it goes
// with its last file, as a prefix does on S3), a marked one stays when emptied and lists as the
// key "dir/" beside what is in it, as AWS and MinIO list a marker. A marker counts as a file
// against the volume's file limit.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::local {

// "a/b/": a key naming a folder marker (one trailing "/").
bool IsFolderKey(std::string_view key);

// Whether the directory `dir_fd` is a folder marker.
bool IsFolderMarker(int dir_fd);

// Marks the directory; true when it was not marked yet. UNIMPLEMENTED on a file system
// without user xattrs.
absl::StatusOr<bool> MarkFolder(int dir_fd);

// Unmarks it; true when it was marked.
bool UnmarkFolder(int dir_fd);

// The marker's object: no bytes, the ETag of nothing, the directory's mtime.
ObjectInfo FolderInfo(int dir_fd, std::string key);

// A reader of a marker's (empty) content.
std::unique_ptr<ObjectReader> FolderReader(ObjectInfo info);

}  // namespace gpuaas::storage::local

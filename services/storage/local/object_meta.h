// An object's ETag and content type, kept with its file in one user xattr ("user.gpuaas"). The
// ETag is recorded together with the size and mtime it belongs to, so a file that a workload
// changed through its mount afterwards gets an opaque tag that changes with the file
// ("<hex>-1", which S3 clients do not take for an MD5) and never an MD5 that no longer matches
// its bytes.
//
// The value is binary and small (35 bytes and the content type) so that, with a typical content
// type, ext4 keeps it inside the inode: a separate xattr block would cost 4 KiB of disk per file,
// which for 100,000 small files is more than the files.
//
// File systems without user xattrs: writing is skipped (ENOTSUP) and every file reads with its
// opaque tag and no content type, which stays correct, only less useful.
#pragma once

#include <sys/stat.h>

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "services/storage/backend.h"

namespace gpuaas::storage::local {

inline constexpr size_t kMaxContentTypeBytes = 1024;

// Records `etag` (an MD5 in hex, or a multipart "<hex>-<parts>") for the file's content as `st`
// (fstat of `fd`, taken after the last write) describes it, and `content_type`. INVALID_ARGUMENT
// for an ETag of another form.
absl::Status WriteObjectMeta(int fd, const struct stat& st, std::string_view etag,
                             std::string_view content_type);

// The recorded ETag when it still belongs to the content `st` describes.
std::optional<std::string> FreshEtag(int fd, const struct stat& st);

// A tag for a file whose content has no recorded MD5: changes whenever the file does.
std::string OpaqueEtag(const struct stat& st);

// The ObjectInfo of the open regular file `fd` (fstat'ed as `st`) stored under `key`. The
// content type is kept even after a workload changed the file; the ETag is not.
ObjectInfo ReadObjectInfo(int fd, const struct stat& st, std::string key);

}  // namespace gpuaas::storage::local

// What PutObject and UploadPart share: the Content-MD5 header, and streaming the body into a
// backend writer that is committed only when every check passed.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "services/storage/backend.h"
#include "services/storage/s3/request_context.h"

namespace gpuaas::storage::s3 {

// The 16 raw bytes Content-MD5 names, "" when absent. InvalidDigest when malformed.
absl::StatusOr<std::string> ContentMd5(const RequestContext& ctx);

// Streams the request body (`length` payload bytes) into `writer`, checks the payload hash or
// chunk signatures and `expected_md5` (BadDigest), then commits. On any error nothing is
// committed and the writer, once destroyed, leaves the previous content as it was.
absl::StatusOr<ObjectInfo> StreamAndCommit(RequestContext& ctx, ObjectWriter& writer,
                                           int64_t length, const std::string& expected_md5);

}  // namespace gpuaas::storage::s3

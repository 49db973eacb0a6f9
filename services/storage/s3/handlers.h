// The S3 operations, one function each. Each answers through ctx.res on success and returns
// the error otherwise (the dispatcher renders it as an S3 error document). They run after
// authentication and authorization; bucket operations find ctx.volume open.
#pragma once

#include "absl/status/status.h"
#include "services/storage/s3/directory.h"
#include "services/storage/s3/request_context.h"

namespace gpuaas::storage::s3 {

// bucket_handlers.cc
absl::Status ListBuckets(RequestContext& ctx, Directory& directory);
absl::Status HeadBucket(RequestContext& ctx, std::string_view region);
absl::Status GetBucketLocation(RequestContext& ctx, std::string_view region);
absl::Status CreateBucket(RequestContext& ctx);

// list_handlers.cc
absl::Status ListObjects(RequestContext& ctx, bool v2);
absl::Status ListMultipartUploads(RequestContext& ctx);

// object_read_handlers.cc
absl::Status HeadObject(RequestContext& ctx);
absl::Status GetObject(RequestContext& ctx);

// object_write_handlers.cc
absl::Status PutObject(RequestContext& ctx);
absl::Status CopyObject(RequestContext& ctx);
absl::Status DeleteObject(RequestContext& ctx);
absl::Status DeleteObjects(RequestContext& ctx);

// multipart_handlers.cc
absl::Status CreateMultipartUpload(RequestContext& ctx);
absl::Status UploadPart(RequestContext& ctx);
absl::Status ListParts(RequestContext& ctx);
absl::Status CompleteMultipartUpload(RequestContext& ctx);
absl::Status AbortMultipartUpload(RequestContext& ctx);

}  // namespace gpuaas::storage::s3

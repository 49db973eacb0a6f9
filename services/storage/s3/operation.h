// The S3 operations the data plane serves, and which one a request asks for.
#pragma once

#include <string_view>

#include "libs/authz/storage_access.h"
#include "services/storage/s3/sigv4.h"

namespace gpuaas::storage::s3 {

enum class Operation {
  kListBuckets,
  kCreateBucket,  // answered BucketAlreadyOwnedByYou: storages are made by the storage API
  kHeadBucket,
  kGetBucketLocation,
  kListObjects,
  kListObjectsV2,
  kListMultipartUploads,
  kDeleteObjects,
  kHeadObject,
  kGetObject,
  kPutObject,
  kCopyObject,
  kDeleteObject,
  kCreateMultipartUpload,
  kUploadPart,
  kListParts,
  kCompleteMultipartUpload,
  kAbortMultipartUpload,
  kNotImplemented,
  kMethodNotAllowed,
};

std::string_view OperationName(Operation op);

// What the operation does to the storage's data, for authz::AuthorizeStorageData.
authz::DataAction ActionOf(Operation op);

// From the method, whether a bucket and a key are named, the query and whether
// x-amz-copy-source is set.
Operation Route(std::string_view method, bool has_bucket, bool has_key, const QueryParams& query,
                bool has_copy_source);

}  // namespace gpuaas::storage::s3

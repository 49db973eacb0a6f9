#include "services/storage/s3/operation.h"

namespace gpuaas::storage::s3 {
namespace {

// Sub-resources S3 has and we do not serve.
constexpr std::string_view kUnsupported[] = {"acl",
                                             "tagging",
                                             "versioning",
                                             "policy",
                                             "lifecycle",
                                             "cors",
                                             "website",
                                             "logging",
                                             "notification",
                                             "replication",
                                             "encryption",
                                             "object-lock",
                                             "retention",
                                             "legal-hold",
                                             "torrent",
                                             "restore",
                                             "select",
                                             "versions",
                                             "accelerate",
                                             "requestPayment",
                                             "analytics",
                                             "inventory",
                                             "metrics",
                                             "ownershipControls",
                                             "publicAccessBlock",
                                             "attributes",
                                             "policyStatus",
                                             "intelligent-tiering"};

bool Has(const QueryParams& query, std::string_view name) {
  for (const auto& [key, value] : query) {
    if (key == name) {
      return true;
    }
  }
  return false;
}

bool HasUnsupported(const QueryParams& query) {
  for (const auto& [key, value] : query) {
    for (std::string_view name : kUnsupported) {
      if (key == name) {
        return true;
      }
    }
  }
  return false;
}

Operation RouteBucket(std::string_view method, const QueryParams& query) {
  if (method == "GET") {
    if (Has(query, "location")) {
      return Operation::kGetBucketLocation;
    }
    if (Has(query, "uploads")) {
      return Operation::kListMultipartUploads;
    }
    if (HasUnsupported(query)) {
      return Operation::kNotImplemented;
    }
    for (const auto& [key, value] : query) {
      if (key == "list-type") {
        return value == "2" ? Operation::kListObjectsV2 : Operation::kNotImplemented;
      }
    }
    return Operation::kListObjects;
  }
  if (method == "HEAD") {
    return Operation::kHeadBucket;
  }
  if (method == "POST") {
    return Has(query, "delete") ? Operation::kDeleteObjects : Operation::kNotImplemented;
  }
  if (method == "PUT") {
    return query.empty() ? Operation::kCreateBucket : Operation::kNotImplemented;
  }
  if (method == "DELETE") {
    return Operation::kNotImplemented;
  }
  return Operation::kMethodNotAllowed;
}

Operation RouteObject(std::string_view method, const QueryParams& query, bool has_copy_source) {
  bool upload = Has(query, "uploadId");
  if (HasUnsupported(query)) {
    return Operation::kNotImplemented;
  }
  if (method == "GET") {
    return upload ? Operation::kListParts : Operation::kGetObject;
  }
  if (method == "HEAD") {
    return Operation::kHeadObject;
  }
  if (method == "PUT") {
    if (upload || Has(query, "partNumber")) {
      if (has_copy_source) {
        return Operation::kNotImplemented;  // UploadPartCopy
      }
      return upload && Has(query, "partNumber") ? Operation::kUploadPart
                                                : Operation::kNotImplemented;
    }
    return has_copy_source ? Operation::kCopyObject : Operation::kPutObject;
  }
  if (method == "POST") {
    if (Has(query, "uploads")) {
      return Operation::kCreateMultipartUpload;
    }
    return upload ? Operation::kCompleteMultipartUpload : Operation::kNotImplemented;
  }
  if (method == "DELETE") {
    return upload ? Operation::kAbortMultipartUpload : Operation::kDeleteObject;
  }
  return Operation::kMethodNotAllowed;
}

}  // namespace

std::string_view OperationName(Operation op) {
  switch (op) {
    case Operation::kListBuckets:
      return "ListBuckets";
    case Operation::kCreateBucket:
      return "CreateBucket";
    case Operation::kHeadBucket:
      return "HeadBucket";
    case Operation::kGetBucketLocation:
      return "GetBucketLocation";
    case Operation::kListObjects:
      return "ListObjects";
    case Operation::kListObjectsV2:
      return "ListObjectsV2";
    case Operation::kListMultipartUploads:
      return "ListMultipartUploads";
    case Operation::kDeleteObjects:
      return "DeleteObjects";
    case Operation::kHeadObject:
      return "HeadObject";
    case Operation::kGetObject:
      return "GetObject";
    case Operation::kPutObject:
      return "PutObject";
    case Operation::kCopyObject:
      return "CopyObject";
    case Operation::kDeleteObject:
      return "DeleteObject";
    case Operation::kCreateMultipartUpload:
      return "CreateMultipartUpload";
    case Operation::kUploadPart:
      return "UploadPart";
    case Operation::kListParts:
      return "ListParts";
    case Operation::kCompleteMultipartUpload:
      return "CompleteMultipartUpload";
    case Operation::kAbortMultipartUpload:
      return "AbortMultipartUpload";
    case Operation::kNotImplemented:
      return "NotImplemented";
    case Operation::kMethodNotAllowed:
      return "MethodNotAllowed";
  }
  return "Unknown";
}

authz::DataAction ActionOf(Operation op) {
  switch (op) {
    case Operation::kHeadObject:
    case Operation::kGetObject:
    case Operation::kListParts:
      return authz::DataAction::kRead;
    case Operation::kPutObject:
    case Operation::kCopyObject:
    case Operation::kDeleteObject:
    case Operation::kDeleteObjects:
    case Operation::kCreateMultipartUpload:
    case Operation::kUploadPart:
    case Operation::kCompleteMultipartUpload:
    case Operation::kAbortMultipartUpload:
      return authz::DataAction::kWrite;
    default:
      return authz::DataAction::kList;
  }
}

Operation Route(std::string_view method, bool has_bucket, bool has_key, const QueryParams& query,
                bool has_copy_source) {
  if (!has_bucket) {
    if (method == "GET") {
      return Operation::kListBuckets;
    }
    return method == "HEAD" || method == "PUT" || method == "POST" || method == "DELETE"
               ? Operation::kNotImplemented
               : Operation::kMethodNotAllowed;
  }
  return has_key ? RouteObject(method, query, has_copy_source) : RouteBucket(method, query);
}

}  // namespace gpuaas::storage::s3

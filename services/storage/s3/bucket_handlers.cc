#include "libs/authz/storage_access.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/handlers.h"
#include "services/storage/s3/xml.h"

namespace gpuaas::storage::s3 {

absl::Status ListBuckets(RequestContext& ctx, Directory& directory) {
  const Caller& caller = ctx.auth.caller;
  std::vector<Bucket> visible;
  std::string owner;
  if (caller.grant) {
    owner = caller.grant->tenant_id;
    auto bucket = directory.FindBucket(caller.grant->storage_id);
    if (bucket.ok() &&
        authz::AuthorizeStorageData(*caller.grant, bucket->storage_id, authz::DataAction::kList)
            .ok()) {
      visible.push_back(*std::move(bucket));
    } else if (!bucket.ok() && bucket.status().code() != absl::StatusCode::kNotFound) {
      return bucket.status();
    }
  } else {
    const authz::Principal& p = *caller.principal;
    owner = p.tenant_id;
    auto buckets = directory.ListBuckets(p.IsGlobal() ? "" : p.tenant_id);
    if (!buckets.ok()) {
      return buckets.status();
    }
    for (auto& bucket : *buckets) {
      if (authz::AuthorizeStorageData(p, bucket.tenant_id, authz::DataAction::kList).ok()) {
        visible.push_back(std::move(bucket));
      }
    }
  }
  XmlWriter xml("ListAllMyBucketsResult");
  xml.Open("Owner");
  xml.Element("ID", owner);
  xml.Element("DisplayName", owner);
  xml.Close("Owner");
  xml.Open("Buckets");
  for (const auto& bucket : visible) {
    xml.Open("Bucket");
    xml.Element("Name", bucket.storage_id);
    xml.Element("CreationDate", XmlTime(bucket.create_time));
    xml.Close("Bucket");
  }
  xml.Close("Buckets");
  SendXml(ctx, 200, xml.Finish());
  return absl::OkStatus();
}

absl::Status HeadBucket(RequestContext& ctx, std::string_view region) {
  ctx.res.set_header("x-amz-bucket-region", std::string(region));
  SendEmpty(ctx, 200);
  return absl::OkStatus();
}

absl::Status GetBucketLocation(RequestContext& ctx, std::string_view region) {
  // us-east-1 is the empty constraint, as AWS answers it.
  std::string body = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<LocationConstraint xmlns=\"";
  body += std::string(kS3Namespace) + "\">";
  if (region != "us-east-1") {
    body += XmlEscape(region);
  }
  body += "</LocationConstraint>";
  SendXml(ctx, 200, std::move(body));
  return absl::OkStatus();
}

absl::Status CreateBucket(RequestContext& ctx) {
  return S3Status("BucketAlreadyOwnedByYou",
                  "The bucket exists and is yours; storages are created through the storage "
                  "API, not over S3.");
}

}  // namespace gpuaas::storage::s3

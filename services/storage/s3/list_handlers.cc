#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "libs/common/base64url.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/handlers.h"
#include "services/storage/s3/xml.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr int kMaxKeys = 1000;

// max-keys / max-uploads / max-parts: 0..1000 (more is clamped, as S3 does).
absl::StatusOr<int> MaxItems(const RequestContext& ctx, std::string_view name) {
  const std::string* text = ctx.Param(name);
  if (text == nullptr) {
    return kMaxKeys;
  }
  int value = 0;
  if (!absl::SimpleAtoi(*text, &value) || value < 0) {
    return S3Status("InvalidArgument", std::string(name) + " must be a non-negative integer");
  }
  return std::min(value, kMaxKeys);
}

std::string ParamOr(const RequestContext& ctx, std::string_view name) {
  const std::string* value = ctx.Param(name);
  return value ? *value : std::string();
}

}  // namespace

absl::Status ListObjects(RequestContext& ctx, bool v2) {
  std::string encoding = ParamOr(ctx, "encoding-type");
  if (!encoding.empty() && encoding != "url") {
    return S3Status("InvalidArgument", "Invalid Encoding Method specified in Request");
  }
  bool url = encoding == "url";
  auto encode = [url](std::string_view text) {
    return url ? UriEncode(text, false) : std::string(text);
  };
  auto max_keys = MaxItems(ctx, "max-keys");
  if (!max_keys.ok()) {
    return max_keys.status();
  }
  ListRequest request;
  request.prefix = ParamOr(ctx, "prefix");
  request.delimiter = ParamOr(ctx, "delimiter");
  request.max_keys = std::max(*max_keys, 1);
  std::string token = ParamOr(ctx, "continuation-token");
  std::string start_after = ParamOr(ctx, v2 ? "start-after" : "marker");
  if (v2 && ctx.HasParam("continuation-token")) {
    auto decoded = Base64UrlDecode(token);
    if (!decoded.ok()) {
      return S3Status("InvalidArgument", "The continuation token provided is incorrect");
    }
    request.start_after = *decoded;
  } else {
    request.start_after = start_after;
  }
  ListResult result;
  if (*max_keys > 0) {
    auto listed = ctx.volume->List(request);
    if (!listed.ok()) {
      return listed.status();
    }
    result = *std::move(listed);
  }

  XmlWriter xml("ListBucketResult");
  xml.Element("Name", ctx.bucket);
  xml.Element("Prefix", encode(request.prefix));
  if (v2) {
    xml.Element("KeyCount", absl::StrCat(result.objects.size() + result.common_prefixes.size()));
    if (ctx.HasParam("continuation-token")) {
      xml.Element("ContinuationToken", token);
    }
    if (!start_after.empty()) {
      xml.Element("StartAfter", encode(start_after));
    }
    if (result.truncated) {
      xml.Element("NextContinuationToken", Base64UrlEncode(result.next_start_after));
    }
  } else {
    xml.Element("Marker", encode(start_after));
    if (result.truncated) {
      xml.Element("NextMarker", encode(result.next_start_after));
    }
  }
  xml.Element("MaxKeys", absl::StrCat(*max_keys));
  if (!request.delimiter.empty()) {
    xml.Element("Delimiter", encode(request.delimiter));
  }
  if (url) {
    xml.Element("EncodingType", "url");
  }
  xml.Element("IsTruncated", result.truncated ? "true" : "false");
  for (const auto& object : result.objects) {
    xml.Open("Contents");
    xml.Element("Key", encode(object.key));
    xml.Element("LastModified", XmlTime(object.modify_time));
    xml.Element("ETag", absl::StrCat("\"", object.etag, "\""));
    xml.Element("Size", absl::StrCat(object.size));
    xml.Element("StorageClass", "STANDARD");
    xml.Close("Contents");
  }
  for (const auto& prefix : result.common_prefixes) {
    xml.Open("CommonPrefixes");
    xml.Element("Prefix", encode(prefix));
    xml.Close("CommonPrefixes");
  }
  SendXml(ctx, 200, xml.Finish());
  return absl::OkStatus();
}

absl::Status ListMultipartUploads(RequestContext& ctx) {
  auto max_uploads = MaxItems(ctx, "max-uploads");
  if (!max_uploads.ok()) {
    return max_uploads.status();
  }
  auto uploads = ctx.volume->ListUploads();
  if (!uploads.ok()) {
    return uploads.status();
  }
  std::string prefix = ParamOr(ctx, "prefix");
  std::string key_marker = ParamOr(ctx, "key-marker");
  std::string id_marker = ParamOr(ctx, "upload-id-marker");
  std::vector<UploadInfo> matching;
  for (auto& upload : *uploads) {
    if (!absl::StartsWith(upload.key, prefix)) {
      continue;
    }
    if (!key_marker.empty() &&
        (upload.key < key_marker || (upload.key == key_marker && upload.upload_id <= id_marker))) {
      continue;
    }
    matching.push_back(std::move(upload));
  }
  std::sort(matching.begin(), matching.end(), [](const UploadInfo& a, const UploadInfo& b) {
    return a.key != b.key ? a.key < b.key : a.upload_id < b.upload_id;
  });
  bool truncated = matching.size() > static_cast<size_t>(*max_uploads);
  if (truncated) {
    matching.resize(*max_uploads);
  }
  XmlWriter xml("ListMultipartUploadsResult");
  xml.Element("Bucket", ctx.bucket);
  xml.Element("KeyMarker", key_marker);
  xml.Element("UploadIdMarker", id_marker);
  if (truncated && !matching.empty()) {
    xml.Element("NextKeyMarker", matching.back().key);
    xml.Element("NextUploadIdMarker", matching.back().upload_id);
  }
  xml.Element("Prefix", prefix);
  xml.Element("MaxUploads", absl::StrCat(*max_uploads));
  xml.Element("IsTruncated", truncated ? "true" : "false");
  for (const auto& upload : matching) {
    xml.Open("Upload");
    xml.Element("Key", upload.key);
    xml.Element("UploadId", upload.upload_id);
    xml.Element("Initiated", XmlTime(upload.create_time));
    xml.Element("StorageClass", "STANDARD");
    xml.Close("Upload");
  }
  SendXml(ctx, 200, xml.Finish());
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::s3

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "services/storage/s3/body_reader.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/handlers.h"
#include "services/storage/s3/upload.h"
#include "services/storage/s3/xml.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr int kMaxPartNumber = 10'000;
constexpr int64_t kMinPartSize = 5 << 20;
// 10,000 parts of about 100 bytes of XML each.
constexpr size_t kMaxCompleteBody = 4 << 20;

absl::Status NoSuchUpload() {
  return S3Status("NoSuchUpload",
                  "The specified multipart upload does not exist. The upload ID may be invalid, "
                  "or the upload may have been aborted or completed.");
}

absl::Status UploadStatus(const absl::Status& status) {
  return status.code() == absl::StatusCode::kNotFound ? NoSuchUpload() : status;
}

// The upload must exist and be for the key the request names.
absl::Status CheckUploadKey(RequestContext& ctx, const std::string& upload_id) {
  auto uploads = ctx.volume->ListUploads();
  if (!uploads.ok()) {
    return uploads.status();
  }
  for (const auto& upload : *uploads) {
    if (upload.upload_id == upload_id) {
      return upload.key == ctx.key ? absl::OkStatus() : NoSuchUpload();
    }
  }
  return NoSuchUpload();
}

absl::StatusOr<int> IntParam(const RequestContext& ctx, std::string_view name, int fallback) {
  const std::string* text = ctx.Param(name);
  if (text == nullptr) {
    return fallback;
  }
  int value = 0;
  if (!absl::SimpleAtoi(*text, &value) || value < 0) {
    return S3Status("InvalidArgument", std::string(name) + " must be a non-negative integer");
  }
  return value;
}

}  // namespace

absl::Status CreateMultipartUpload(RequestContext& ctx) {
  auto upload = ctx.volume->CreateUpload(ctx.key, ctx.Header("Content-Type"));
  if (!upload.ok()) {
    return upload.status();
  }
  XmlWriter xml("InitiateMultipartUploadResult");
  xml.Element("Bucket", ctx.bucket);
  xml.Element("Key", ctx.key);
  xml.Element("UploadId", upload->upload_id);
  SendXml(ctx, 200, xml.Finish());
  return absl::OkStatus();
}

absl::Status UploadPart(RequestContext& ctx) {
  int part_number = 0;
  if (!absl::SimpleAtoi(*ctx.Param("partNumber"), &part_number) || part_number < 1 ||
      part_number > kMaxPartNumber) {
    return S3Status("InvalidArgument", "Part number must be an integer between 1 and 10000");
  }
  auto length = ctx.PayloadLength();
  if (!length.ok()) {
    return length.status();
  }
  auto expected_md5 = ContentMd5(ctx);
  if (!expected_md5.ok()) {
    return expected_md5.status();
  }
  auto writer = ctx.volume->CreatePart(*ctx.Param("uploadId"), part_number, *length);
  if (!writer.ok()) {
    return UploadStatus(writer.status());
  }
  auto info = StreamAndCommit(ctx, **writer, *length, *expected_md5);
  if (!info.ok()) {
    return UploadStatus(info.status());
  }
  ctx.res.set_header("ETag", absl::StrCat("\"", info->etag, "\""));
  SendEmpty(ctx, 200);
  return absl::OkStatus();
}

absl::Status ListParts(RequestContext& ctx) {
  const std::string& upload_id = *ctx.Param("uploadId");
  auto marker = IntParam(ctx, "part-number-marker", 0);
  auto max_parts = IntParam(ctx, "max-parts", 1000);
  if (!marker.ok()) {
    return marker.status();
  }
  if (!max_parts.ok()) {
    return max_parts.status();
  }
  absl::Status owned = CheckUploadKey(ctx, upload_id);
  if (!owned.ok()) {
    return owned;
  }
  auto parts = ctx.volume->ListParts(upload_id);
  if (!parts.ok()) {
    return UploadStatus(parts.status());
  }
  std::vector<PartInfo> page;
  for (const auto& part : *parts) {
    if (part.part_number > *marker) {
      page.push_back(part);
    }
  }
  std::sort(page.begin(), page.end(),
            [](const PartInfo& a, const PartInfo& b) { return a.part_number < b.part_number; });
  int limit = std::min(*max_parts, 1000);
  bool truncated = page.size() > static_cast<size_t>(limit);
  if (truncated) {
    page.resize(limit);
  }
  XmlWriter xml("ListPartsResult");
  xml.Element("Bucket", ctx.bucket);
  xml.Element("Key", ctx.key);
  xml.Element("UploadId", upload_id);
  xml.Element("PartNumberMarker", absl::StrCat(*marker));
  if (!page.empty()) {
    xml.Element("NextPartNumberMarker", absl::StrCat(page.back().part_number));
  }
  xml.Element("MaxParts", absl::StrCat(limit));
  xml.Element("IsTruncated", truncated ? "true" : "false");
  xml.Element("StorageClass", "STANDARD");
  for (const auto& part : page) {
    xml.Open("Part");
    xml.Element("PartNumber", absl::StrCat(part.part_number));
    xml.Element("LastModified", XmlTime(part.modify_time));
    xml.Element("ETag", absl::StrCat("\"", part.etag, "\""));
    xml.Element("Size", absl::StrCat(part.size));
    xml.Close("Part");
  }
  SendXml(ctx, 200, xml.Finish());
  return absl::OkStatus();
}

absl::Status CompleteMultipartUpload(RequestContext& ctx) {
  const std::string& upload_id = *ctx.Param("uploadId");
  auto length = ctx.PayloadLength();
  if (!length.ok()) {
    return length.status();
  }
  auto body =
      ReadSmallBody(ctx.body, ctx.auth.payload, *length, kMaxCompleteBody, &ctx.body_consumed);
  if (!body.ok()) {
    return body.status();
  }
  ctx.log->bytes_in += static_cast<int64_t>(body->size());
  auto requested = ParseCompleteRequest(*body);
  if (!requested.ok()) {
    return requested.status();
  }
  absl::Status owned = CheckUploadKey(ctx, upload_id);
  if (!owned.ok()) {
    return owned;
  }
  auto stored = ctx.volume->ListParts(upload_id);
  if (!stored.ok()) {
    return UploadStatus(stored.status());
  }
  // Checked here, so each failure gets its own S3 code; the backend checks again.
  std::vector<PartInfo> parts;
  for (size_t i = 0; i < requested->size(); ++i) {
    const CompletedPart& want = (*requested)[i];
    if (i > 0 && want.part_number <= (*requested)[i - 1].part_number) {
      return S3Status("InvalidPartOrder",
                      "The list of parts was not in ascending order. The parts list must be "
                      "specified in order by part number.");
    }
    auto found = std::find_if(stored->begin(), stored->end(), [&](const PartInfo& part) {
      return part.part_number == want.part_number;
    });
    if (found == stored->end() || found->etag != want.etag) {
      return S3Status("InvalidPart",
                      absl::StrCat("Part ", want.part_number,
                                   " could not be found or its ETag does not match."));
    }
    parts.push_back(*found);
  }
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    if (parts[i].size < kMinPartSize) {
      return S3Status("EntityTooSmall",
                      absl::StrCat("Part ", parts[i].part_number,
                                   " is smaller than the minimum allowed size of 5 MiB."));
    }
  }
  auto info = ctx.volume->CompleteUpload(upload_id, parts);
  if (!info.ok()) {
    if (info.status().code() == absl::StatusCode::kInvalidArgument) {
      return S3Status("InvalidPart", info.status().message());
    }
    return UploadStatus(info.status());
  }
  XmlWriter xml("CompleteMultipartUploadResult");
  xml.Element("Location", absl::StrCat("/", ctx.bucket, "/", UriEncode(ctx.key, false)));
  xml.Element("Bucket", ctx.bucket);
  xml.Element("Key", ctx.key);
  xml.Element("ETag", absl::StrCat("\"", info->etag, "\""));
  SendXml(ctx, 200, xml.Finish());
  return absl::OkStatus();
}

absl::Status AbortMultipartUpload(RequestContext& ctx) {
  const std::string& upload_id = *ctx.Param("uploadId");
  absl::Status owned = CheckUploadKey(ctx, upload_id);
  if (!owned.ok()) {
    return owned;
  }
  absl::Status status = ctx.volume->AbortUpload(upload_id);
  if (!status.ok()) {
    return UploadStatus(status);
  }
  SendEmpty(ctx, 204);
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::s3

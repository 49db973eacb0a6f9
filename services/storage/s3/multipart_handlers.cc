#include <algorithm>
#include <memory>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
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
// Uploads larger than this are assembled while the response keeps the connection busy.
constexpr int64_t kAssembleInBackground = int64_t{256} << 20;
constexpr std::string_view kDeclaration = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";

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

absl::Status CompletionError(const absl::Status& status) {
  if (status.code() == absl::StatusCode::kInvalidArgument) {
    return S3Status("InvalidPart", status.message());
  }
  return UploadStatus(status);
}

std::string CompletionResult(const std::string& bucket, const std::string& key,
                             const ObjectInfo& info) {
  XmlWriter xml("CompleteMultipartUploadResult");
  xml.Element("Location", absl::StrCat("/", bucket, "/", UriEncode(key, false)));
  xml.Element("Bucket", bucket);
  xml.Element("Key", key);
  xml.Element("ETag", absl::StrCat("\"", info.etag, "\""));
  return xml.Finish();
}

// A backend assembling a large upload on a thread of its own.
struct Assembly {
  absl::Mutex mu;
  bool done ABSL_GUARDED_BY(mu) = false;
  absl::StatusOr<ObjectInfo> result ABSL_GUARDED_BY(mu);
  std::thread worker;
};

// Assembling tens of GB outlasts clients' read timeouts (the AWS CLI's is 60 s), so, as S3
// does, the answer is 200 at once, the XML declaration, a space every second while the
// backend works, then the result, or an <Error> document, which SDKs look for in a 200 to
// CompleteMultipartUpload.
void AnswerWhileAssembling(RequestContext& ctx, const std::string& upload_id,
                           std::vector<PartInfo> parts) {
  auto assembly = std::make_shared<Assembly>();
  assembly->worker =
      std::thread([assembly, volume = ctx.volume, upload_id, parts = std::move(parts)] {
        auto result = volume->CompleteUpload(upload_id, parts);
        absl::MutexLock lock(&assembly->mu);
        assembly->result = std::move(result);
        assembly->done = true;
      });
  ctx.res.status = 200;
  ctx.res.set_chunked_content_provider(
      "application/xml",
      [assembly, log = ctx.log, bucket = ctx.bucket, key = ctx.key, resource = ctx.decoded_path,
       request_id = ctx.request_id, started = false](size_t, http::DataSink& sink) mutable {
        if (!started) {
          started = true;
          return sink.write(kDeclaration.data(), kDeclaration.size());
        }
        absl::StatusOr<ObjectInfo> result;
        bool done =
            assembly->mu.LockWhenWithTimeout(absl::Condition(&assembly->done), absl::Seconds(1));
        if (done) {
          result = assembly->result;
        }
        assembly->mu.Unlock();
        if (!done) {
          return sink.write(" ", 1);
        }
        std::string body;
        if (result.ok()) {
          body = CompletionResult(bucket, key, *result);
        } else {
          S3Error error = ToS3Error(CompletionError(result.status()));
          log->error_code = error.code;
          body = ErrorDocument(error, resource, request_id);
        }
        body.erase(0, body.find('\n') + 1);  // the declaration went first
        log->bytes_out += static_cast<int64_t>(body.size());
        bool written = sink.write(body.data(), body.size());
        sink.done();
        return written;
      },
      [assembly](bool) {
        if (assembly->worker.joinable()) {
          assembly->worker.join();
        }
      });
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
  auto body = ReadSmallBody(ctx.body, ctx.auth.payload, ctx.Checksum(), *length, kMaxCompleteBody,
                            &ctx.body_consumed);
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
  int64_t total = 0;
  for (const auto& part : parts) {
    total += part.size;
  }
  if (total > kAssembleInBackground) {
    AnswerWhileAssembling(ctx, upload_id, std::move(parts));
    return absl::OkStatus();
  }
  auto info = ctx.volume->CompleteUpload(upload_id, parts);
  if (!info.ok()) {
    return CompletionError(info.status());
  }
  SendXml(ctx, 200, CompletionResult(ctx.bucket, ctx.key, *info));
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

#include <openssl/evp.h>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/storage/s3/body_reader.h"
#include "services/storage/s3/errors.h"
#include "services/storage/s3/handlers.h"
#include "services/storage/s3/object_key_form.h"
#include "services/storage/s3/upload.h"
#include "services/storage/s3/xml.h"

namespace gpuaas::storage::s3 {
namespace {

// DeleteObjects names at most 1,000 keys of at most 1,024 bytes each.
constexpr size_t kMaxDeleteBody = 2 << 20;

// A zero-byte key ending in "/": a folder marker (the AWS console's "Create folder", s3fs's
// mkdir), which the volume keeps as the folder itself.
absl::Status PutFolder(RequestContext& ctx, int64_t length) {
  if (length != 0) {
    return S3Status("InvalidArgument",
                    "A key ending in \"/\" is a folder marker and holds no bytes.");
  }
  auto info = ctx.volume->CreateFolder(ctx.key);
  if (!info.ok()) {
    return info.status();
  }
  ctx.res.set_header("ETag", absl::StrCat("\"", info->etag, "\""));
  SendEmpty(ctx, 200);
  return absl::OkStatus();
}

}  // namespace

absl::Status PutObject(RequestContext& ctx) {
  auto length = ctx.PayloadLength();
  if (!length.ok()) {
    return length.status();
  }
  auto expected_md5 = ContentMd5(ctx);
  if (!expected_md5.ok()) {
    return expected_md5.status();
  }
  if (absl::EndsWith(ctx.key, "/")) {
    return PutFolder(ctx, *length);
  }
  auto writer = ctx.volume->Create(ctx.key, *length, ctx.Header("Content-Type"));
  if (!writer.ok()) {
    return writer.status();
  }
  auto info = StreamAndCommit(ctx, **writer, *length, *expected_md5);
  if (!info.ok()) {
    return info.status();
  }
  ctx.res.set_header("ETag", absl::StrCat("\"", info->etag, "\""));
  SendEmpty(ctx, 200);
  return absl::OkStatus();
}

absl::Status CopyObject(RequestContext& ctx) {
  std::string source = ctx.Header("x-amz-copy-source");
  size_t query = source.find('?');
  if (query != std::string::npos) {
    source.resize(query);  // ?versionId=...: we keep one version
  }
  auto decoded = UriDecode(source, false);
  if (!decoded.ok()) {
    return S3Status("InvalidArgument", "x-amz-copy-source is not URL-encoded correctly");
  }
  std::string_view path = *decoded;
  if (!path.empty() && path.front() == '/') {
    path.remove_prefix(1);
  }
  size_t slash = path.find('/');
  if (slash == std::string_view::npos || slash == 0 || slash + 1 == path.size()) {
    return S3Status("InvalidArgument", "x-amz-copy-source must be <bucket>/<key>");
  }
  if (path.substr(0, slash) != ctx.bucket) {
    return S3Status("AccessDenied", "CopyObject copies within one bucket only");
  }
  if (absl::Status key = CheckObjectKey(path.substr(slash + 1)); !key.ok()) {
    return key;
  }
  auto info = ctx.volume->Copy(path.substr(slash + 1), ctx.key);
  if (!info.ok()) {
    if (info.status().code() == absl::StatusCode::kNotFound) {
      return S3Status("NoSuchKey", "The specified key does not exist.");
    }
    return info.status();
  }
  XmlWriter xml("CopyObjectResult");
  xml.Element("LastModified", XmlTime(info->modify_time));
  xml.Element("ETag", absl::StrCat("\"", info->etag, "\""));
  SendXml(ctx, 200, xml.Finish());
  return absl::OkStatus();
}

absl::Status DeleteObject(RequestContext& ctx) {
  absl::Status status = ctx.volume->Delete(ctx.key);
  // A directory is no object: deleting it, like deleting a missing key, changes nothing.
  if (!status.ok() && status.code() != absl::StatusCode::kFailedPrecondition) {
    return status;
  }
  SendEmpty(ctx, 204);
  return absl::OkStatus();
}

absl::Status DeleteObjects(RequestContext& ctx) {
  auto length = ctx.PayloadLength();
  if (!length.ok()) {
    return length.status();
  }
  auto body = ReadSmallBody(ctx.body, ctx.auth.payload, ctx.Checksum(), *length, kMaxDeleteBody,
                            &ctx.body_consumed);
  if (!body.ok()) {
    return body.status();
  }
  ctx.log->bytes_in += static_cast<int64_t>(body->size());
  auto expected_md5 = ContentMd5(ctx);
  if (!expected_md5.ok()) {
    return expected_md5.status();
  }
  if (!expected_md5->empty()) {
    unsigned char digest[EVP_MAX_MD_SIZE];
    unsigned int digest_length = 0;
    EVP_Digest(body->data(), body->size(), digest, &digest_length, EVP_md5(), nullptr);
    if (std::string_view(reinterpret_cast<char*>(digest), digest_length) != *expected_md5) {
      return S3Status("BadDigest", "The Content-MD5 you specified did not match what we received.");
    }
  }
  auto request = ParseDeleteRequest(*body);
  if (!request.ok()) {
    return request.status();
  }
  XmlWriter xml("DeleteResult");
  for (const auto& key : request->keys) {
    absl::Status status = ctx.volume->Delete(key);
    if (status.ok() || status.code() == absl::StatusCode::kFailedPrecondition) {
      if (!request->quiet) {
        xml.Open("Deleted");
        xml.Element("Key", key);
        xml.Close("Deleted");
      }
      continue;
    }
    S3Error error = ToS3Error(status);
    xml.Open("Error");
    xml.Element("Key", key);
    xml.Element("Code", error.code);
    xml.Element("Message", error.message);
    xml.Close("Error");
  }
  SendXml(ctx, 200, xml.Finish());
  return absl::OkStatus();
}

}  // namespace gpuaas::storage::s3

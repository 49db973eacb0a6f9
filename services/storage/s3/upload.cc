#include "services/storage/s3/upload.h"

#include "absl/strings/escaping.h"
#include "services/storage/s3/body_reader.h"
#include "services/storage/s3/errors.h"

namespace gpuaas::storage::s3 {

absl::StatusOr<std::string> ContentMd5(const RequestContext& ctx) {
  if (!ctx.HasHeader("Content-MD5")) {
    return std::string();
  }
  std::string raw;
  if (!absl::Base64Unescape(ctx.Header("Content-MD5"), &raw) || raw.size() != 16) {
    return S3Status("InvalidDigest", "The Content-MD5 you specified was invalid.");
  }
  return raw;
}

absl::StatusOr<ObjectInfo> StreamAndCommit(RequestContext& ctx, ObjectWriter& writer,
                                           int64_t length, const std::string& expected_md5) {
  RequestLog& log = *ctx.log;
  absl::Status status = ReadBody(
      ctx.body, ctx.auth.payload, length,
      [&writer, &log](std::string_view data) {
        log.bytes_in += static_cast<int64_t>(data.size());
        return writer.Write(data);
      },
      &ctx.body_consumed);
  if (!status.ok()) {
    return status;
  }
  if (!expected_md5.empty() && writer.Md5() != expected_md5) {
    return S3Status("BadDigest", "The Content-MD5 you specified did not match what we received.");
  }
  return writer.Commit();
}

}  // namespace gpuaas::storage::s3

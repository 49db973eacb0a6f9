#include "services/storage/s3/errors.h"

#include <array>

#include "absl/strings/cord.h"
#include "services/storage/s3/internal/views.h"
#include "services/storage/s3/xml.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr std::string_view kPayloadUrl = "type.gpuaas/s3.ErrorCode";
constexpr std::string_view kInternalMessage = "We encountered an internal error. Please try again.";

struct CodeInfo {
  std::string_view code;
  int http_status;
  absl::StatusCode canonical;
};

constexpr std::array<CodeInfo, 36> kCodes = {{
    {"AccessDenied", 403, absl::StatusCode::kPermissionDenied},
    {"AuthorizationHeaderMalformed", 400, absl::StatusCode::kInvalidArgument},
    {"AuthorizationQueryParametersError", 400, absl::StatusCode::kInvalidArgument},
    {"BadDigest", 400, absl::StatusCode::kInvalidArgument},
    {"BucketAlreadyOwnedByYou", 409, absl::StatusCode::kAlreadyExists},
    {"EntityTooLarge", 400, absl::StatusCode::kInvalidArgument},
    {"EntityTooSmall", 400, absl::StatusCode::kInvalidArgument},
    {"IncompleteBody", 400, absl::StatusCode::kInvalidArgument},
    {"InternalError", 500, absl::StatusCode::kInternal},
    {"InvalidAccessKeyId", 403, absl::StatusCode::kUnauthenticated},
    {"InvalidArgument", 400, absl::StatusCode::kInvalidArgument},
    {"InvalidBucketName", 400, absl::StatusCode::kInvalidArgument},
    {"InvalidDigest", 400, absl::StatusCode::kInvalidArgument},
    {"InvalidPart", 400, absl::StatusCode::kInvalidArgument},
    {"InvalidPartOrder", 400, absl::StatusCode::kInvalidArgument},
    {"InvalidRange", 416, absl::StatusCode::kOutOfRange},
    {"InvalidRequest", 400, absl::StatusCode::kInvalidArgument},
    {"InvalidURI", 400, absl::StatusCode::kInvalidArgument},
    {"KeyTooLongError", 400, absl::StatusCode::kInvalidArgument},
    {"MalformedXML", 400, absl::StatusCode::kInvalidArgument},
    {"MethodNotAllowed", 405, absl::StatusCode::kUnimplemented},
    {"MissingContentLength", 411, absl::StatusCode::kInvalidArgument},
    {"MissingSecurityHeader", 400, absl::StatusCode::kInvalidArgument},
    {"NoSuchBucket", 404, absl::StatusCode::kNotFound},
    {"NoSuchKey", 404, absl::StatusCode::kNotFound},
    {"NoSuchUpload", 404, absl::StatusCode::kNotFound},
    {"NotImplemented", 501, absl::StatusCode::kUnimplemented},
    {"PreconditionFailed", 412, absl::StatusCode::kFailedPrecondition},
    {"QuotaExceeded", 403, absl::StatusCode::kResourceExhausted},
    {"RequestTimeTooSkewed", 403, absl::StatusCode::kPermissionDenied},
    {"ServiceUnavailable", 503, absl::StatusCode::kUnavailable},
    {"SignatureDoesNotMatch", 403, absl::StatusCode::kPermissionDenied},
    {"XAmzContentSHA256Mismatch", 400, absl::StatusCode::kInvalidArgument},
    {"InvalidObjectState", 403, absl::StatusCode::kFailedPrecondition},
    {"ExpiredToken", 400, absl::StatusCode::kUnauthenticated},
    {"SlowDown", 503, absl::StatusCode::kUnavailable},
}};

const CodeInfo* Find(std::string_view code) {
  for (const auto& info : kCodes) {
    if (info.code == code) {
      return &info;
    }
  }
  return nullptr;
}

std::string_view CodeFor(absl::StatusCode canonical, std::string_view not_found_code) {
  switch (canonical) {
    case absl::StatusCode::kNotFound:
      return not_found_code;
    case absl::StatusCode::kInvalidArgument:
      return "InvalidArgument";
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kUnauthenticated:
      return "AccessDenied";
    case absl::StatusCode::kResourceExhausted:
      return "QuotaExceeded";
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kAlreadyExists:
      return "InvalidRequest";
    case absl::StatusCode::kOutOfRange:
      return "InvalidRange";
    // UNKNOWN is the database's "connection lost during COMMIT" (a failover): every S3 write
    // we answer (a whole object to a key, a delete, a part) is idempotent, so a client retry
    // is safe, and 503 is what the AWS CLI and rclone retry. Never 500 for "the database left".
    case absl::StatusCode::kUnavailable:
    case absl::StatusCode::kDeadlineExceeded:
    case absl::StatusCode::kAborted:
    case absl::StatusCode::kUnknown:
      return "ServiceUnavailable";
    case absl::StatusCode::kUnimplemented:
      return "NotImplemented";
    default:
      return "InternalError";
  }
}

}  // namespace

absl::Status S3Status(std::string_view code, const std::string& message) {
  const CodeInfo* info = Find(code);
  absl::Status status(info ? info->canonical : absl::StatusCode::kInternal, message);
  status.SetPayload(Av(kPayloadUrl), absl::Cord(std::string(code)));
  return status;
}

std::string S3Code(const absl::Status& status) {
  auto payload = status.GetPayload(Av(kPayloadUrl));
  return payload ? std::string(*payload) : std::string();
}

S3Error ToS3Error(const absl::Status& status, std::string_view not_found_code) {
  std::string code = S3Code(status);
  if (code.empty()) {
    code = std::string(CodeFor(status.code(), not_found_code));
  }
  const CodeInfo* info = Find(code);
  if (info == nullptr || code == "InternalError") {
    return S3Error{500, "InternalError", std::string(kInternalMessage)};
  }
  return S3Error{info->http_status, code, std::string(status.message())};
}

std::string ErrorDocument(const S3Error& error, std::string_view resource,
                          std::string_view request_id) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error>";
  out += "<Code>" + XmlEscape(error.code) + "</Code>";
  out += "<Message>" + XmlEscape(error.message) + "</Message>";
  out += "<Resource>" + XmlEscape(resource) + "</Resource>";
  out += "<RequestId>" + XmlEscape(request_id) + "</RequestId>";
  out += "</Error>";
  return out;
}

}  // namespace gpuaas::storage::s3

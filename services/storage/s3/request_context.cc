#include "services/storage/s3/request_context.h"

#include "absl/strings/numbers.h"
#include "services/storage/s3/errors.h"

namespace gpuaas::storage::s3 {

const std::string* RequestContext::Param(std::string_view name) const {
  for (const auto& [key, value] : query) {
    if (key == name) {
      return &value;
    }
  }
  return nullptr;
}

std::string RequestContext::Header(std::string_view name) const {
  return http.get_header_value(std::string(name));
}

bool RequestContext::HasHeader(std::string_view name) const {
  return http.has_header(std::string(name));
}

absl::StatusOr<int64_t> RequestContext::PayloadLength() const {
  int64_t length = 0;
  if (auth.payload.kind == PayloadCheck::Kind::kStreaming) {
    if (!absl::SimpleAtoi(Header("x-amz-decoded-content-length"), &length) || length < 0) {
      return S3Status("MissingContentLength",
                      "aws-chunked uploads need x-amz-decoded-content-length");
    }
    return length;
  }
  if (!HasHeader("Content-Length")) {
    if (HasHeader("Transfer-Encoding")) {
      return S3Status("MissingContentLength", "You must provide the Content-Length HTTP header.");
    }
    return 0;
  }
  if (!absl::SimpleAtoi(Header("Content-Length"), &length) || length < 0) {
    return S3Status("InvalidArgument", "Content-Length is not a number");
  }
  return length;
}

void SendXml(RequestContext& ctx, int status, std::string body) {
  ctx.res.status = status;
  ctx.log->bytes_out += static_cast<int64_t>(body.size());
  ctx.res.set_content(std::move(body), "application/xml");
}

void SendEmpty(RequestContext& ctx, int status) {
  ctx.res.status = status;
  ctx.res.set_header("Content-Length", "0");
}

std::string XmlTime(absl::Time t) {
  return absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", t, absl::UTCTimeZone());
}

std::string HttpTime(absl::Time t) {
  return absl::FormatTime("%a, %d %b %Y %H:%M:%S GMT", t, absl::UTCTimeZone());
}

}  // namespace gpuaas::storage::s3

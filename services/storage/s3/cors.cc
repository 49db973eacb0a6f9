#include "services/storage/s3/cors.h"

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace gpuaas::storage::s3 {
namespace {

constexpr absl::string_view kAllowMethods = "GET, HEAD, PUT, POST, DELETE";
// What a page may read besides the CORS-safelisted headers: ETag completes a multipart
// upload, the request id goes into error reports, the rest serve ranged reads and downloads.
constexpr absl::string_view kExposeHeaders =
    "ETag, x-amz-request-id, Content-Range, Accept-Ranges, Content-Disposition, "
    "Content-Encoding";
// Browsers cap it (Chromium at 2 hours); 10 minutes keeps a changed list quick to apply.
constexpr absl::string_view kMaxAgeSeconds = "600";

// Request headers a presigned request from the console may carry; x-amz-* ones must still be
// signed (auth.cc's UnsignedHeader), so allowing them here allows nothing unsigned.
bool AllowedRequestHeader(absl::string_view lower_name) {
  return lower_name == "content-type" || lower_name == "content-md5" || lower_name == "range" ||
         absl::StartsWith(lower_name, "x-amz-");
}

bool HostChar(char c) {
  return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '.' || c == '-' || c == ':' ||
         c == '[' || c == ']';
}

}  // namespace

absl::Status CheckCorsOrigin(absl::string_view origin) {
  absl::string_view rest = origin;
  bool scheme = absl::ConsumePrefix(&rest, "http://") || absl::ConsumePrefix(&rest, "https://");
  bool host = !rest.empty() && rest.front() != ':' && rest.back() != ':';
  for (char c : rest) {
    host = host && HostChar(c);
  }
  if (!scheme || !host) {
    return absl::InvalidArgumentError(absl::StrCat(
        "\"", origin,
        "\" is not an origin: want http:// or https://, a lower-case host and an optional port, "
        "nothing after (http://127.0.0.1:8090)"));
  }
  return absl::OkStatus();
}

CorsPolicy::CorsPolicy(std::vector<std::string> origins) : origins_(std::move(origins)) {}

bool CorsPolicy::Listed(const std::string& origin) const {
  for (const std::string& listed : origins_) {
    if (origin == listed) {
      return true;
    }
  }
  return false;
}

void CorsPolicy::AddResponseHeaders(const http::HttpRequest& req, http::HttpResponse& res) const {
  if (origins_.empty()) {
    return;
  }
  res.set_header("Vary", "Origin");
  std::string origin = req.get_header_value("Origin");
  if (Listed(origin)) {
    res.set_header("Access-Control-Allow-Origin", origin);
    res.set_header("Access-Control-Expose-Headers", std::string(kExposeHeaders));
  }
}

bool CorsPolicy::AnswerPreflight(const http::HttpRequest& req, http::HttpResponse& res) const {
  if (req.method != "OPTIONS" || !req.has_header("Access-Control-Request-Method") ||
      !Listed(req.get_header_value("Origin"))) {
    return false;
  }
  std::vector<std::string> allowed;
  for (absl::string_view name : absl::StrSplit(
           req.get_header_value("Access-Control-Request-Headers"), ',', absl::SkipWhitespace())) {
    std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(name));
    if (AllowedRequestHeader(lower)) {
      allowed.push_back(std::move(lower));
    }
  }
  res.status = 200;
  res.set_header("Access-Control-Allow-Methods", std::string(kAllowMethods));
  if (!allowed.empty()) {
    res.set_header("Access-Control-Allow-Headers", absl::StrJoin(allowed, ", "));
  }
  res.set_header("Access-Control-Max-Age", std::string(kMaxAgeSeconds));
  res.set_header("Content-Length", "0");
  return true;
}

}  // namespace gpuaas::storage::s3

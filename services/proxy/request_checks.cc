#include "services/proxy/request_checks.h"

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"

namespace gpuaas::proxy {
namespace {

absl::string_view Av(std::string_view s) { return {s.data(), s.size()}; }

bool IsSafeMethod(std::string_view method) {
  return method == "GET" || method == "HEAD" || method == "OPTIONS" || method == "TRACE";
}

}  // namespace

bool HasSafeFraming(std::optional<std::string_view> transfer_encoding, bool has_content_length,
                    unsigned version) {
  if (!transfer_encoding) {
    return true;
  }
  return version >= 11 && !has_content_length &&
         absl::EqualsIgnoreCase(absl::StripAsciiWhitespace(Av(*transfer_encoding)), "chunked");
}

bool FromOwnOriginIfUnsafe(const RequestOrigin& r) {
  if (IsSafeMethod(r.method) && !r.upgrade) {
    return true;
  }
  if (!r.fetch_site.empty() && r.fetch_site != "same-origin" && r.fetch_site != "none") {
    return false;
  }
  return r.origin.empty() || absl::EqualsIgnoreCase(Av(r.origin), Av(r.own_origin));
}

}  // namespace gpuaas::proxy

#include "services/gateway/browser_session.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <algorithm>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace gpuaas::gateway {
namespace {

// The refresh cookie goes to the session endpoints only. Not "/api/session": a cookie path
// matches a request path only up to a "/", so browsers would not send it to
// /api/session:refresh (RFC 6265 5.1.4).
constexpr absl::string_view kRefreshCookiePath = "/api/";

std::string CookieAttributes(const CookieOptions& options, absl::string_view path) {
  return absl::StrCat("; Path=", path, "; SameSite=Strict", options.secure ? "; Secure" : "");
}

bool IsSafeMethod(absl::string_view method) { return method == "GET" || method == "HEAD"; }

// Printable ASCII: all a credential we issue holds, and all gRPC carries in metadata (it aborts
// the process on a call given anything else).
bool IsPrintableAscii(absl::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return c >= 0x20 && c <= 0x7e; });
}

}  // namespace

std::optional<std::string> CookieValue(const http::HttpRequest& req, absl::string_view name) {
  auto [begin, end] = req.headers.equal_range("Cookie");
  for (auto it = begin; it != end; ++it) {
    for (absl::string_view pair : absl::StrSplit(it->second, ';')) {
      pair = absl::StripAsciiWhitespace(pair);
      if (absl::ConsumePrefix(&pair, name) && absl::ConsumePrefix(&pair, "=")) {
        return IsPrintableAscii(pair) ? std::optional<std::string>(pair) : std::nullopt;
      }
    }
  }
  return std::nullopt;
}

std::string CsrfTokenFor(absl::string_view access_token) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(access_token.data(), access_token.size(), digest, &size, EVP_sha256(), nullptr);
  return absl::BytesToHexString(absl::string_view(reinterpret_cast<const char*>(digest), 16));
}

std::vector<std::string> SessionCookies(absl::string_view access_token,
                                        absl::string_view refresh_token,
                                        const CookieOptions& options) {
  return {
      absl::StrCat(kSessionCookie, "=", access_token, "; HttpOnly", CookieAttributes(options, "/")),
      absl::StrCat(kRefreshCookie, "=", refresh_token, "; HttpOnly",
                   CookieAttributes(options, kRefreshCookiePath)),
      absl::StrCat(kCsrfCookie, "=", CsrfTokenFor(access_token), CookieAttributes(options, "/")),
  };
}

std::vector<std::string> ClearedSessionCookies(const CookieOptions& options) {
  return {
      absl::StrCat(kSessionCookie, "=; Max-Age=0; HttpOnly", CookieAttributes(options, "/")),
      absl::StrCat(kRefreshCookie, "=; Max-Age=0; HttpOnly",
                   CookieAttributes(options, kRefreshCookiePath)),
      absl::StrCat(kCsrfCookie, "=; Max-Age=0", CookieAttributes(options, "/")),
  };
}

bool IsCrossSite(const http::HttpRequest& req, bool https) {
  const std::string fetch_site = absl::AsciiStrToLower(req.get_header_value("Sec-Fetch-Site"));
  if (fetch_site == "cross-site" || fetch_site == "same-site") {
    return true;
  }
  if (!req.has_header("Origin")) {
    return false;
  }
  const std::string own =
      absl::StrCat(https ? "https://" : "http://", req.get_header_value("Host"));
  return !absl::EqualsIgnoreCase(req.get_header_value("Origin"), own);
}

absl::StatusOr<std::string> AuthorizationOf(const http::HttpRequest& req, bool https) {
  if (req.has_header("Authorization")) {
    std::string authorization = req.get_header_value("Authorization");
    if (!IsPrintableAscii(authorization)) {
      return absl::UnauthenticatedError("Authorization: not a credential (printable ASCII only)");
    }
    return authorization;
  }
  std::optional<std::string> token = CookieValue(req, kSessionCookie);
  if (!token || token->empty()) {
    return std::string();
  }
  if (IsCrossSite(req, https)) {
    return absl::PermissionDeniedError("a request from another site cannot use the session");
  }
  const std::string sent = req.get_header_value(std::string(kCsrfHeader));
  const std::string want = CsrfTokenFor(*token);
  if (!IsSafeMethod(req.method) &&
      (sent.size() != want.size() || CRYPTO_memcmp(sent.data(), want.data(), want.size()) != 0)) {
    return absl::PermissionDeniedError(
        absl::StrCat(kCsrfHeader, ": missing or not this session's (reload the page)"));
  }
  return absl::StrCat("Bearer ", *token);
}

}  // namespace gpuaas::gateway

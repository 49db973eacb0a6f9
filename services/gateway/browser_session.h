// How a browser's requests carry credentials, and the checks that keep another site from using
// them. The console logs in through the gateway, which keeps the tokens in cookies the page's
// scripts cannot read:
//   gpuaas_session  the access token (HttpOnly, SameSite=Strict, Secure over TLS)
//   gpuaas_refresh  the refresh token, sent to /api/session only (same flags)
//   gpuaas_csrf     readable by the page: the value it must echo in X-CSRF-Token on every
//                   request that changes something. It is derived from the access token
//                   (CsrfTokenFor), so no other site can know it or plant a working one, and
//                   no replica needs to remember it.
// A request with an Authorization header is an API client's: no cookie is read for it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "libs/http/http_message.h"

namespace gpuaas::gateway {

inline constexpr absl::string_view kSessionCookie = "gpuaas_session";
inline constexpr absl::string_view kRefreshCookie = "gpuaas_refresh";
inline constexpr absl::string_view kCsrfCookie = "gpuaas_csrf";
inline constexpr absl::string_view kCsrfHeader = "X-CSRF-Token";

// The value of cookie `name` in the request's Cookie headers; none when it holds anything but
// printable ASCII (no value we set does).
std::optional<std::string> CookieValue(const http::HttpRequest& req, absl::string_view name);

// The CSRF token that goes with `access_token`: 32 hex digits of SHA-256 over it.
std::string CsrfTokenFor(absl::string_view access_token);

struct CookieOptions {
  bool secure = false;  // served over TLS (or behind a TLS terminator)
};

// The Set-Cookie values that start (or renew) a session.
std::vector<std::string> SessionCookies(absl::string_view access_token,
                                        absl::string_view refresh_token,
                                        const CookieOptions& options);
// The Set-Cookie values that end one.
std::vector<std::string> ClearedSessionCookies(const CookieOptions& options);

// Whether the request came from another site: an Origin other than this gateway's own
// (scheme and Host; `https`: browsers reach us over https, our own TLS or a terminator's in
// front), or a browser's Sec-Fetch-Site saying cross-site or same-site.
bool IsCrossSite(const http::HttpRequest& req, bool https);

// The `authorization` value to call the services with: the request's own Authorization header,
// else the session cookie's token, after the browser checks: PERMISSION_DENIED for a cookie
// request from another site, or one that changes something (not GET/HEAD) without the session's
// X-CSRF-Token; UNAUTHENTICATED for an Authorization header that is not printable ASCII (what
// gRPC metadata holds). Empty when the request carries no credential (the service then answers
// UNAUTHENTICATED where one is needed).
absl::StatusOr<std::string> AuthorizationOf(const http::HttpRequest& req, bool https);

}  // namespace gpuaas::gateway

// Checks on a request head that are not about who the caller is: its framing, and whether a
// cookie-authenticated request came from the instance's own pages.
#pragma once

#include <optional>
#include <string_view>

namespace gpuaas::proxy {

// RFC 9112 §6.1/§6.3: a request's body is framed by a single, final `chunked` or by
// Content-Length, never both, and nothing else. True for: no Transfer-Encoding at all, or
// exactly "chunked" (any case, optional whitespace) without Content-Length on HTTP/1.1.
// Everything else ("identity, chunked", "chunked, chunked", "gzip", "gzip, chunked", TE with
// Content-Length, TE on HTTP/1.0) is refused with 400: the proxy and the workload could
// disagree on where the body ends, and the rest would be read as another request (smuggling).
// `transfer_encoding`: every Transfer-Encoding field joined with ",", nullopt when none came.
bool HasSafeFraming(std::optional<std::string_view> transfer_encoding, bool has_content_length,
                    unsigned version);

// What a browser says about where a request came from.
struct RequestOrigin {
  std::string_view method;
  bool upgrade = false;         // asks for a protocol upgrade (WebSocket)
  std::string_view origin;      // Origin, "" when absent
  std::string_view fetch_site;  // Sec-Fetch-Site, "" when absent
  std::string_view own_origin;  // "<scheme>://<Host>" of this very instance port
};

// False when the request may change state (a method other than GET, HEAD, OPTIONS, TRACE, or
// an upgrade) and a browser says it came from elsewhere: Sec-Fetch-Site other than
// "same-origin" or "none", or an Origin other than `own_origin` (including "null"). Instance
// hosts share one site, so "same-site" is refused too: it is another tenant's page. A request
// with neither header is not a browser's cross-origin request and passes.
bool FromOwnOriginIfUnsafe(const RequestOrigin& r);

}  // namespace gpuaas::proxy

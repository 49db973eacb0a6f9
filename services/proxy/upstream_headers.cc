#include "services/proxy/upstream_headers.h"

#include "services/proxy/access_cookie.h"
#include "services/proxy/gpuaas_credential.h"
#include "services/proxy/proxy_token.h"

namespace gpuaas::proxy {

namespace http = boost::beast::http;

namespace {

std::string_view Sv(boost::beast::string_view s) { return {s.data(), s.size()}; }

}  // namespace

std::string JoinedField(const http::fields& fields, std::string_view name,
                        std::string_view separator) {
  std::string joined;
  const boost::beast::string_view key(name.data(), name.size());
  for (auto [it, end] = fields.equal_range(key); it != end; ++it) {
    if (!joined.empty()) {
      joined += separator;
    }
    joined += Sv(it->value());
  }
  return joined;
}

void PrepareUpstreamHeaders(http::fields& fields, const UpstreamHeaderContext& ctx) {
  const std::string cookies = JoinedField(fields, "Cookie", "; ");
  fields.erase(http::field::cookie);
  if (std::string rest = WithoutCookie(cookies, kAccessCookieName); !rest.empty()) {
    fields.set(http::field::cookie, rest);
  }
  // Each Authorization field on its own: ours go, the workload's own stay.
  for (auto it = fields.find(http::field::authorization); it != fields.end();) {
    if (it->name() != http::field::authorization) {
      break;
    }
    it = IsGpuaasCredential(Sv(it->value())) ? fields.erase(it) : std::next(it);
  }
  SetProxyToken(ctx.route, fields);
  fields.erase(http::field::expect);
  const std::string xff = JoinedField(fields, "X-Forwarded-For", ", ");
  fields.set("X-Forwarded-For",
             xff.empty() ? std::string(ctx.client_ip) : xff + ", " + std::string(ctx.client_ip));
  fields.set("X-Forwarded-Proto", ctx.tls ? "https" : "http");
  fields.set("X-Forwarded-Host", std::string(ctx.host));
}

}  // namespace gpuaas::proxy

// The one place that decides what a workload sees of a request head: every header the proxy
// removes, adds or rewrites before forwarding is here, on every route (public or not), so a new
// rule (e.g. a secret the proxy injects for catalog images) has one home.
//
// Removed: the proxy's access cookie (the workload's own cookies stay), every Authorization
// field that carries a gpuaas credential (gpuaas_credential.h; the workload's own schemes stay),
// Expect (the proxy answers 100-continue itself by reading the body).
// Set: on a private route with a proxy token, Authorization to it (proxy_token.h: catalog
// images serve the proxy only); X-Forwarded-For (appended), X-Forwarded-Proto, X-Forwarded-Host.
#pragma once

#include <boost/beast/http/fields.hpp>
#include <string>
#include <string_view>

#include "services/proxy/route_table.h"

namespace gpuaas::proxy {

struct UpstreamHeaderContext {
  std::string_view client_ip;
  bool tls = false;
  std::string_view host;   // the Host the client asked for
  const PortRoute& route;  // where the request goes
};

// Every value of `name` in `fields`, joined with `separator` (fields may repeat).
std::string JoinedField(const boost::beast::http::fields& fields, std::string_view name,
                        std::string_view separator);

// Rewrites `fields` (a request head) into what the workload receives. Never blocks.
void PrepareUpstreamHeaders(boost::beast::http::fields& fields, const UpstreamHeaderContext& ctx);

}  // namespace gpuaas::proxy

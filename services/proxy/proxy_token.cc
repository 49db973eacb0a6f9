#include "services/proxy/proxy_token.h"

#include <string>

namespace gpuaas::proxy {

void SetProxyToken(const PortRoute& route, boost::beast::http::fields& headers) {
  if (route.is_public || route.proxy_token.empty()) {
    return;
  }
  headers.set(boost::beast::http::field::authorization, "token " + route.proxy_token);
}

}  // namespace gpuaas::proxy

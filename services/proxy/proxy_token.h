// The instance's proxy token on the requests the proxy forwards to its private ports:
// `authorization: token <token>`, which the catalog's servers require (Jupyter's
// --ServerApp.token, tools/images/webui-demo), so they answer the proxy only and not another
// workload on the node's network. Applied after the caller's own credentials are stripped, so
// it replaces any authorization the caller sent. Public ports get nothing: anyone may reach them
// through the proxy, and a workload there could echo the header back to anyone.
#pragma once

#include <boost/beast/http/fields.hpp>

#include "services/proxy/route_table.h"

namespace gpuaas::proxy {

// Sets `headers`' authorization to `route`'s proxy token when the route is private and has one.
void SetProxyToken(const PortRoute& route, boost::beast::http::fields& headers);

}  // namespace gpuaas::proxy

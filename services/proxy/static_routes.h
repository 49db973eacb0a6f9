// BENCHMARKS ONLY (--static-route-for-benchmarks): routes given on the command line instead of
// the instance service's watch, so a benchmark can put the proxy in front of a trivial
// upstream without running the platform. Access checks stay on: a private route still needs a
// token of its tenant.
#pragma once

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "services/proxy/route_table.h"

namespace gpuaas::proxy {

struct StaticRoute {
  std::string instance_id;
  PortRoute route;
};

// Each "<instance_id>-<port>=TENANT@HOST:PORT[,public]". Error: INVALID_ARGUMENT naming the bad
// one.
absl::StatusOr<std::vector<StaticRoute>> ParseStaticRoutes(const std::vector<std::string>& specs);

// Puts them in `routes` as READY instances and marks it synced.
void InstallStaticRoutes(const std::vector<StaticRoute>& static_routes, RouteTable& routes);

}  // namespace gpuaas::proxy

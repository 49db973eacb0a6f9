#include "services/proxy/static_routes.h"

#include <map>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "services/proxy/access_host.h"

namespace gpuaas::proxy {

namespace instancepb = ::gpuaas::instance::v1;

absl::StatusOr<std::vector<StaticRoute>> ParseStaticRoutes(const std::vector<std::string>& specs) {
  std::vector<StaticRoute> out;
  for (const std::string& spec : specs) {
    auto bad = [&] {
      return absl::InvalidArgumentError(absl::StrCat(
          "--static-route-for-benchmarks: want ID-PORT=TENANT@HOST:PORT[,public], got '", spec,
          "'"));
    };
    std::string_view rest = spec;
    const bool is_public = rest.ends_with(",public");
    if (is_public) {
      rest.remove_suffix(7);
    }
    const size_t eq = rest.find('=');
    const size_t at = rest.find('@');
    const size_t colon = rest.rfind(':');
    if (eq == std::string_view::npos || at == std::string_view::npos || at < eq ||
        colon == std::string_view::npos || colon < at) {
      return bad();
    }
    std::optional<AccessHost> name = ParseAccessHost(std::string(rest.substr(0, eq)) + ".x", "x");
    int32_t host_port = 0;
    if (!name || !absl::SimpleAtoi(std::string(rest.substr(colon + 1)), &host_port) ||
        host_port <= 0) {
      return bad();
    }
    out.push_back({.instance_id = name->instance_id,
                   .route = {.tenant_id = std::string(rest.substr(eq + 1, at - eq - 1)),
                             .port = name->port,
                             .is_public = is_public,
                             .base_url = "/",
                             .host = std::string(rest.substr(at + 1, colon - at - 1)),
                             .host_port = host_port}});
  }
  return out;
}

void InstallStaticRoutes(const std::vector<StaticRoute>& static_routes, RouteTable& routes) {
  // One instance may have several routed ports: gather them before upserting it.
  std::map<std::string, instancepb::InstanceChange> changes;
  for (const StaticRoute& r : static_routes) {
    instancepb::InstanceChange& change = changes[r.instance_id];
    change.set_type(instancepb::InstanceChange::TYPE_UPSERTED);
    instancepb::Instance* i = change.mutable_instance();
    i->set_instance_id(r.instance_id);
    i->set_tenant_id(r.route.tenant_id);
    i->set_state(instancepb::STATE_RUNNING);
    instancepb::Port* p = i->mutable_template_()->add_ports();
    p->set_port(r.route.port);
    p->set_is_public(r.route.is_public);
    instancepb::PortMapping* m = i->add_ports();
    m->set_port(r.route.port);
    m->set_host(r.route.host);
    m->set_host_port(r.route.host_port);
  }
  for (const auto& [id, change] : changes) {
    routes.Apply(change);
  }
  routes.MarkSynced();
}

}  // namespace gpuaas::proxy

#include "services/proxy/proxy_metrics.h"

#include <string>

namespace gpuaas::proxy {

ProxyMetrics::ProxyMetrics()
    : registry_(std::make_shared<prometheus::Registry>()),
      responses_(prometheus::BuildCounter()
                     .Name("gpuaas_proxy_responses_total")
                     .Help("HTTP responses sent to clients, by status class (2xx ...).")
                     .Register(*registry_)),
      upstream_errors_(prometheus::BuildCounter()
                           .Name("gpuaas_proxy_upstream_errors_total")
                           .Help("Workloads that could not be reached or broke off a response.")
                           .Register(*registry_)
                           .Add({})),
      refused_connections_(prometheus::BuildCounter()
                               .Name("gpuaas_proxy_refused_connections_total")
                               .Help("Client connections refused at accept by a connection cap.")
                               .Register(*registry_)
                               .Add({})),
      revoked_connections_(prometheus::BuildCounter()
                               .Name("gpuaas_proxy_revoked_connections_total")
                               .Help("Open connections ended because their access stopped holding.")
                               .Register(*registry_)
                               .Add({})),
      connections_(prometheus::BuildGauge()
                       .Name("gpuaas_proxy_connections")
                       .Help("Client connections open.")
                       .Register(*registry_)
                       .Add({})),
      tunnels_(prometheus::BuildGauge()
                   .Name("gpuaas_proxy_tunnels")
                   .Help("Upgraded (WebSocket) connections being tunnelled.")
                   .Register(*registry_)
                   .Add({})),
      routes_(prometheus::BuildGauge()
                  .Name("gpuaas_proxy_routed_instances")
                  .Help("Instances with at least one routed port.")
                  .Register(*registry_)
                  .Add({})) {
  by_class_[0] = &responses_.Add({{"class", "other"}});
  for (int c = 1; c <= 5; ++c) {
    by_class_[c] = &responses_.Add({{"class", std::to_string(c) + "xx"}});
  }
}

void ProxyMetrics::CountResponse(unsigned status) {
  const unsigned c = status / 100;
  by_class_[c >= 1 && c <= 5 ? c : 0]->Increment();
}

}  // namespace gpuaas::proxy

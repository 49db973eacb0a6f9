// The proxy's routes, kept in memory so no request waits on an RPC: instance_id → its tenant
// and, for each HTTP port of its template, whether it is public, its base_url and where the
// agent mapped it (host:host_port), and the instance's proxy token. Fed by RouteWatcher from the
// instance service's WatchInstances stream (and GetProxyToken). Only READY and RUNNING instances
// whose port has a mapping route.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "gpuaas/instance/v1/instance.pb.h"

namespace gpuaas::proxy {

// Where one instance port is reached, and how.
struct PortRoute {
  std::string tenant_id;
  int32_t port = 0;
  bool is_public = false;
  std::string base_url;  // "/" when the template left it empty
  std::string host;      // the node's advertised address
  int32_t host_port = 0;
  // The instance's proxy token (AccessService.GetProxyToken), sent to its private ports
  // (proxy_token.h); empty when unknown (static routes). A secret: never logged.
  std::string proxy_token;
};

// Thread-safe; lookups take a shared lock.
class RouteTable final {
 public:
  // The route of `instance_id`'s `port`; nullopt when the instance is unknown, not READY or
  // RUNNING, or the port is not an HTTP port of its template with a mapping.
  std::optional<PortRoute> Find(const std::string& instance_id, int32_t port) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // One change of the watch stream (UPSERTED, DELETED; SYNCED marks the table synced);
  // `proxy_token` is an upserted instance's.
  void Apply(const ::gpuaas::instance::v1::InstanceChange& change,
             const std::string& proxy_token = "") ABSL_LOCKS_EXCLUDED(mu_);

  // Every instance at once, after listing them again (the watch fell too far behind), with
  // their proxy tokens by instance id.
  void Replace(const std::vector<::gpuaas::instance::v1::Instance>& instances,
               const absl::flat_hash_map<std::string, std::string>& proxy_tokens = {})
      ABSL_LOCKS_EXCLUDED(mu_);

  // Whether `instance` routes any port (so needs its proxy token).
  static bool Routes(const ::gpuaas::instance::v1::Instance& instance);
  // The proxy token of routed instance `instance_id`; empty when it routes nothing now.
  std::string ProxyTokenOf(const std::string& instance_id) const ABSL_LOCKS_EXCLUDED(mu_);

  // A SYNCED marker arrived at least once: the table holds every instance.
  bool synced() const ABSL_LOCKS_EXCLUDED(mu_);
  void MarkSynced() ABSL_LOCKS_EXCLUDED(mu_);

  // Routed instances, for metrics.
  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  using Ports = std::vector<PortRoute>;
  // The ports an instance routes now; empty when it routes none.
  static Ports RoutesOf(const ::gpuaas::instance::v1::Instance& instance,
                        const std::string& proxy_token);
  void Put(const ::gpuaas::instance::v1::Instance& instance, const std::string& proxy_token)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Ports> routes_ ABSL_GUARDED_BY(mu_);
  bool synced_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace gpuaas::proxy

#include "services/proxy/open_connection_checks.h"

#include "libs/authz/workload_access.h"

namespace gpuaas::proxy {

absl::Status StillRoutes(const Decision& forwarded, const RouteTable& routes,
                         authz::Authenticator& authenticator) {
  const std::optional<PortRoute> route =
      routes.Find(forwarded.host.instance_id, forwarded.host.port);
  // The same instance port, at the same place: an instance that stopped and started again
  // elsewhere is a workload this connection was never let through to.
  if (!route || route->tenant_id != forwarded.route.tenant_id ||
      route->host != forwarded.route.host || route->host_port != forwarded.route.host_port) {
    return absl::NotFoundError("the instance port no longer routes here");
  }
  const bool had_credentials = forwarded.cookie_grant || !forwarded.bearer.empty();
  if (!had_credentials && !route->is_public) {
    return absl::PermissionDeniedError("the port is no longer public");
  }
  if (forwarded.bearer.empty()) {
    return absl::OkStatus();
  }
  absl::StatusOr<authz::Principal> principal = authenticator.Authenticate(forwarded.bearer);
  if (!principal.ok()) {
    return principal.status();
  }
  return authz::AuthorizeWorkloadAccess(*principal, route->tenant_id);
}

absl::Duration UntilNextCheck(const Decision& forwarded, const GrantRechecks& rechecks,
                              absl::Duration recheck, absl::Time now) {
  if (!forwarded.cookie_grant) {
    return recheck;
  }
  const std::optional<absl::Time> confirmed = rechecks.ConfirmedAt(forwarded.cookie);
  if (!confirmed || now < *confirmed) {
    return absl::ZeroDuration();
  }
  return std::max(absl::ZeroDuration(), *confirmed + recheck - now);
}

}  // namespace gpuaas::proxy

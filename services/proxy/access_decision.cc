#include "services/proxy/access_decision.h"

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/authz/workload_access.h"
#include "services/proxy/request_checks.h"

namespace gpuaas::proxy {
namespace {

Decision Respond(unsigned status, std::string body) {
  Decision d;
  d.status = status;
  d.body = std::move(body);
  return d;
}

// One body for every "no such thing here", so answers never hint that an instance exists.
Decision NotFound() { return Respond(404, "not found\n"); }

Decision FromStatus(const absl::Status& s) {
  switch (s.code()) {
    case absl::StatusCode::kPermissionDenied:
      return Respond(403, "forbidden\n");
    case absl::StatusCode::kUnauthenticated:
      return Respond(401, "unauthorized\n");
    default:
      return NotFound();
  }
}

}  // namespace

std::string_view TargetPath(std::string_view target) { return target.substr(0, target.find('?')); }

std::string_view QueryParam(std::string_view target, std::string_view name) {
  const size_t q = target.find('?');
  if (q == std::string_view::npos) {
    return "";
  }
  const std::string_view query = target.substr(q + 1);
  for (absl::string_view pair :
       absl::StrSplit(absl::string_view(query.data(), query.size()), '&')) {
    if (absl::ConsumePrefix(&pair, absl::string_view(name.data(), name.size())) &&
        absl::ConsumePrefix(&pair, "=")) {
      return std::string_view(pair.data(), pair.size());
    }
  }
  return "";
}

Decision Decide(const RequestHead& head, const DecisionContext& ctx) {
  // Origin-form only: an absolute-form target could name another instance than the Host.
  if (head.target.empty() || head.target.front() != '/' || head.method == "CONNECT") {
    return Respond(400, "bad request\n");
  }
  if (head.host_fields != 1) {
    return Respond(400, "bad request: exactly one Host\n");
  }
  const std::string_view path = TargetPath(head.target);
  if (path == kHealthPath) {
    return ctx.routes.synced() ? Respond(200, "ok\n") : Respond(503, "routes not synced yet\n");
  }
  std::optional<AccessHost> host = ParseAccessHost(head.host, ctx.access_domain);
  if (!host) {
    return NotFound();
  }
  if (!ctx.routes.synced()) {
    return Respond(503, "routes not synced yet\n");
  }
  std::optional<PortRoute> route = ctx.routes.Find(host->instance_id, host->port);

  Decision forward;
  forward.action = Decision::Action::kForward;
  forward.host = *host;
  if (path == kAccessPath) {
    const std::string_view code = QueryParam(head.target, "code");
    if (head.method != "GET" || code.empty() || !route) {
      return NotFound();
    }
    forward.action = Decision::Action::kRedeem;
    forward.code = std::string(code);
    forward.route = *route;
    return forward;
  }
  if (route && route->is_public) {
    forward.route = *route;
    return forward;
  }

  // A cookie counts only when it grants this host; else the bearer token decides.
  if (std::string_view cookie = FindCookie(head.cookie, kAccessCookieName); !cookie.empty()) {
    absl::StatusOr<authz::WorkloadGrant> grant = ctx.cookies.Verify(cookie, ctx.now);
    if (grant.ok() && grant->instance_id == host->instance_id && grant->port == host->port) {
      if (!route) {
        return NotFound();
      }
      if (absl::Status s = authz::AuthorizeWorkloadAccess(*grant, host->instance_id, host->port,
                                                          route->tenant_id);
          !s.ok()) {
        return FromStatus(s);
      }
      // The browser attaches the cookie to whatever another page makes it send.
      const std::string own_origin =
          std::string(ctx.tls ? "https://" : "http://") + std::string(head.host);
      if (!FromOwnOriginIfUnsafe({.method = head.method,
                                  .upgrade = head.upgrade,
                                  .origin = head.origin,
                                  .fetch_site = head.fetch_site,
                                  .own_origin = own_origin})) {
        return Respond(403, "forbidden: cross-origin request\n");
      }
      forward.route = *route;
      forward.cookie_grant = *std::move(grant);
      forward.cookie = std::string(cookie);
      return forward;
    }
  }
  if (head.authorization.size() < 7 ||
      !absl::EqualsIgnoreCase(absl::string_view(head.authorization.data(), 7), "Bearer ")) {
    return Respond(401, "unauthorized\n");
  }
  absl::StatusOr<authz::Principal> principal = ctx.authenticator.Authenticate(head.authorization);
  if (!principal.ok()) {
    return principal.status().code() == absl::StatusCode::kUnavailable
               ? Respond(503, "cannot verify tokens now\n")
               : Respond(401, "unauthorized\n");
  }
  if (!route) {
    return NotFound();
  }
  if (absl::Status s = authz::AuthorizeWorkloadAccess(*principal, route->tenant_id); !s.ok()) {
    return FromStatus(s);
  }
  forward.route = *route;
  forward.bearer = std::string(head.authorization);
  return forward;
}

}  // namespace gpuaas::proxy

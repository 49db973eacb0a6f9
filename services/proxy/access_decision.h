// What the proxy does with one request head, decided apart from any I/O so every answer of the
// access matrix is testable on its own:
//
//   /.gpuaas/healthz on any host        200 once routes synced, else 503
//   not origin-form, several Hosts      400 (never guess which instance was meant)
//   a Host that names no instance port  404
//   routes not synced yet               503
//   /.gpuaas/access?code=C              redeem the one-time link (RedeemAccessCode)
//   a public port                       forward, no credentials
//   no valid credentials                401 (none, forged, expired; unknown hosts alike)
//   another tenant, unknown or stopped
//   instance, unknown port              404, one body for all, so nothing hints it exists
//   a role without Power::kUse          403
//   the cookie, on an unsafe method or
//   an upgrade from another origin      403 (request_checks.h: another tenant's page)
//   else                                forward
//
// Credentials: the proxy's cookie (access_cookie.h) for this very host, else
// `Authorization: Bearer <access token>`. The cookie wins, so a workload's own Authorization
// scheme still reaches it when a browser holds the cookie. The decisions themselves are
// authz::AuthorizeWorkloadAccess.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "absl/time/time.h"
#include "libs/authz/verifier.h"
#include "services/proxy/access_cookie.h"
#include "services/proxy/access_host.h"
#include "services/proxy/route_table.h"

namespace gpuaas::proxy {

inline constexpr std::string_view kHealthPath = "/.gpuaas/healthz";
inline constexpr std::string_view kAccessPath = "/.gpuaas/access";

// The parts of a request head the decision reads.
struct RequestHead {
  std::string_view method;
  std::string_view target;
  int host_fields = 0;  // how many Host header fields came
  std::string_view host;
  std::string_view authorization;
  std::string_view cookie;      // every Cookie field, joined with "; "
  std::string_view origin;      // Origin, "" when absent
  std::string_view fetch_site;  // Sec-Fetch-Site, "" when absent
  bool upgrade = false;         // an Upgrade field came (WebSocket)
};

struct Decision {
  enum class Action {
    kRespond,  // answer `status` with `body`
    kForward,  // forward to `route`
    kRedeem,   // trade `code` for a cookie, then redirect to route.base_url
  };
  Action action = Action::kRespond;
  unsigned status = 404;
  std::string body;
  AccessHost host;
  PortRoute route;
  std::string code;
  // Forwarding on the proxy's cookie: its grant and value, to re-check (grant_rechecks.h).
  std::optional<authz::WorkloadGrant> cookie_grant;
  std::string cookie;
  // Forwarding on a bearer token: the Authorization value, to verify again while the
  // connection stays open (open_connection_checks.h). A secret: never logged.
  std::string bearer;
};

struct DecisionContext {
  const RouteTable& routes;
  authz::Authenticator& authenticator;
  const AccessCookieSigner& cookies;
  std::string_view access_domain;
  bool tls = false;  // the scheme of the instance's own origin
  absl::Time now;
};

// Never blocks, except that a bearer token may make the authenticator fetch the JWKS (at most
// once per refetch interval, see verifier.h).
Decision Decide(const RequestHead& head, const DecisionContext& ctx);

// The path of an origin-form target (without its query).
std::string_view TargetPath(std::string_view target);

// The value of `name` in the target's query ("" when absent).
std::string_view QueryParam(std::string_view target, std::string_view name);

}  // namespace gpuaas::proxy

// What keeps an open connection (a WebSocket tunnel, a streamed body) open. A request is
// decided once, at its head (access_decision.h), but a Jupyter kernel's WebSocket can stay open
// for days: so while it is open, whatever let it through is asked about again on the grant's
// re-check bound (--grant-recheck), and the connection ends once it no longer holds.
//
// This file is the part that needs no RPC: the route (the instance stopped or was deleted, the
// port went or stopped being public) and a bearer token (it expired, its keys were retired). A
// cookie's grant (the member removed, demoted or disabled) is the instance service's answer,
// re-checked through grant_rechecks.h as for new requests.
#pragma once

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "libs/authz/verifier.h"
#include "services/proxy/access_decision.h"
#include "services/proxy/grant_rechecks.h"
#include "services/proxy/route_table.h"

namespace gpuaas::proxy {

// OK while `forwarded` (a kForward decision) would still be forwarded to the same workload
// port: NOT_FOUND when its instance port no longer routes or routes elsewhere; PERMISSION_DENIED
// when a port reached without credentials is no longer public; UNAUTHENTICATED when its bearer
// token no longer verifies, or the authorizer's answer for it. Never blocks, except that a
// bearer token may make the authenticator fetch the JWKS (as in Decide).
absl::Status StillRoutes(const Decision& forwarded, const RouteTable& routes,
                         authz::Authenticator& authenticator);

// How long until a cookie's grant, last confirmed as `rechecks` remembers it, must be asked
// about again (zero when it must be asked now); `recheck` for a connection without a cookie.
absl::Duration UntilNextCheck(const Decision& forwarded, const GrantRechecks& rechecks,
                              absl::Duration recheck, absl::Time now);

}  // namespace gpuaas::proxy

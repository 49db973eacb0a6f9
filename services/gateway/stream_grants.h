// Whether an open event stream's caller may still have it. A stream (WatchInstances, a log
// follow) is authorized once, when it opens, by the service that serves it; it can stay open
// for hours while the access token it opened with expires and its user is removed from the
// tenant. So the gateway asks again, every --stream-recheck, with the stream's own credentials:
// AuthService.WhoAmI verifies the token (expired, forged or its user deleted: UNAUTHENTICATED)
// and lists the user's memberships from the database, which must still include the tenant the
// token acts for. The gateway holds no power of its own for this: the caller's token asks.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "libs/client/auth_client.h"

namespace gpuaas::gateway {

// OK while `authorization` ("Bearer <token>") still verifies and its user is still a member
// of the tenant it acts for (a global or machine role has no tenant to lose). UNAUTHENTICATED
// when the token no longer verifies; PERMISSION_DENIED when the membership is gone;
// UNAVAILABLE or DEADLINE_EXCEEDED when the auth service cannot answer now (the stream is then
// asked about again, not ended: no new request depends on the auth service either). Blocks on
// one RPC of at most `timeout`.
absl::Status StillMayStream(const client::AuthClient& auth, const std::string& authorization,
                            absl::Duration timeout);

}  // namespace gpuaas::gateway

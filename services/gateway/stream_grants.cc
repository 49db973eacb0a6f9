#include "services/gateway/stream_grants.h"

#include "absl/strings/match.h"
#include "libs/authz/roles.h"

namespace gpuaas::gateway {

absl::Status StillMayStream(const client::AuthClient& auth, const std::string& authorization,
                            absl::Duration timeout) {
  constexpr absl::string_view kBearer = "Bearer ";
  if (!absl::StartsWithIgnoreCase(authorization, kBearer)) {
    return absl::UnauthenticatedError("the stream has no bearer token");
  }
  client::CallContext call;
  call.set_bearer_token(std::string_view(authorization).substr(kBearer.size()))
      .set_timeout(timeout);
  absl::StatusOr<client::authpb::WhoAmIResponse> me = auth.WhoAmI({}, call);
  if (!me.ok()) {
    return me.status();
  }
  if (me->tenant_id().empty() || authz::IsMachineRole(me->role())) {
    return absl::OkStatus();
  }
  for (const client::authpb::Membership& m : me->memberships()) {
    if (m.tenant_id() == me->tenant_id()) {
      return absl::OkStatus();
    }
  }
  return absl::PermissionDeniedError("no longer a member of the tenant the stream was opened in");
}

}  // namespace gpuaas::gateway

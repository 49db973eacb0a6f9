// Reaching an instance's ports: the one-time links GetInstanceAccess hands out, their
// redemption by the access proxy (AccessService), the proxy's re-checks of what a redeemed link
// granted (CheckAccessGrant: is the instance port still there, is the user still a member who
// may use it), the proxy's activity reports, which keep an instance in use from its idle
// auto-stop, and the proxy token the proxy sends to an instance's private ports
// (0006_proxy_tokens.sql).
//
// A link is `<scheme>://<instance_id>-<port>.<domain>/.gpuaas/access?code=<code>`. The code is
// 32 random bytes; only its SHA-256 is stored, with the instance, port and user it was made
// for, and redeeming deletes the row, so a code works once, and only on its own host.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gpuaas/instance/v1/instance.pb.h"
#include "libs/authz/principal.h"
#include "libs/client/access_tokens.h"
#include "libs/client/auth_client.h"
#include "libs/client/call_context.h"
#include "libs/db/db.h"

namespace gpuaas::instance {

namespace pb = ::gpuaas::instance::v1;

struct AccessOptions {
  // The access proxy's domain, with its port when not the scheme's ("gpuaas.localhost:8080").
  std::string domain = "gpuaas.localhost:8080";
  // "http", or "https" when the proxy serves TLS.
  std::string scheme = "http";
  // How long a link's code stays redeemable.
  absl::Duration code_ttl = absl::Minutes(1);
};

class Access final {
 public:
  // `auth` (for users and memberships, called with `own_tokens`, the instance service's own
  // ROLE_SERVICE key: the proxy's key reads neither) must outlive this object, as must
  // `own_tokens`.
  Access(db::Pool& pool, client::AuthClient& auth, client::AccessTokens& own_tokens,
         AccessOptions options);

  // InstanceService.GetInstanceAccess: MEMBER and above, of the instance's tenant.
  absl::Status GetInstanceAccess(const authz::Principal& p, const pb::GetInstanceAccessRequest& req,
                                 pb::InstanceAccess& out);
  // AccessService: the proxy's calls (ROLE_ACCESS_PROXY only, Power::kAccessCalls).
  absl::Status RedeemAccessCode(const authz::Principal& p, const pb::RedeemAccessCodeRequest& req,
                                pb::AccessGrant& out);
  absl::Status CheckAccessGrant(const authz::Principal& p, const client::CallerCredentials& caller,
                                const pb::CheckAccessGrantRequest& req, pb::AccessGrant& out);
  absl::Status ReportAccess(const authz::Principal& p, const pb::ReportAccessRequest& req,
                            pb::ReportAccessResponse& out);
  absl::Status GetProxyToken(const authz::Principal& p, const pb::GetProxyTokenRequest& req,
                             pb::ProxyToken& out);

  // PERMISSION_DENIED unless `user_id` is an enabled user with Power::kUse in `tenant_id` (a
  // member's role, or a global role): whether a grant or an open session still holds. Calls
  // auth (GetUser, ListMembers) with the service's own token, by `deadline`; UNAVAILABLE when
  // auth cannot answer.
  absl::Status CheckStillMember(absl::Time deadline, const std::string& tenant_id,
                                const std::string& user_id);

 private:
  db::Pool& pool_;
  client::AuthClient& auth_;
  client::AccessTokens& own_tokens_;
  AccessOptions options_;
};

}  // namespace gpuaas::instance

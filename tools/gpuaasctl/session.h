// A logged-in conversation with the auth service: every call goes through client::AuthClient
// (deadline, status mapping) with the session's bearer token, and an expired access token is
// refreshed (Refresh RPC) and saved before it is used, so long-running scripts keep working
// without a new login.
#pragma once

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.pb.h"
#include "libs/client/auth_client.h"
#include "libs/common/clock.h"
#include "libs/common/status_macros.h"
#include "tools/gpuaasctl/token_store.h"

namespace gpuaas::ctl {

namespace authpb = ::gpuaas::auth::v1;
using AuthClient = ::gpuaas::client::AuthClient;

// Refresh this long before expiry, so a token does not expire between the check and the call.
inline constexpr absl::Duration kRefreshSkew = absl::Seconds(30);

class Session final {
 public:
  // An AuthClient method: `&AuthClient::GetTenant` ...
  template <class Req, class Resp>
  using Method = absl::StatusOr<Resp> (AuthClient::*)(const Req&, const client::CallContext&) const;

  // `auth`'s default timeout bounds every call. `env_token` (from $GPUAAS_TOKEN) overrides the
  // token file and is never refreshed: for scripts that hold a token from an API-key exchange.
  // `clock` judges token expiry only; it must outlive the session.
  Session(AuthClient auth, TokenStore store, const Clock& clock, std::string auth_addr,
          std::optional<std::string> env_token);

  // An authenticated call. Errors: the server's code; UNAUTHENTICATED when not logged in or
  // the session can no longer be refreshed. Blocks up to the timeout (twice when it refreshes).
  template <class Req, class Resp>
  absl::StatusOr<Resp> Call(Method<Req, Resp> method, const Req& req);

  // A call without a token (Login, Refresh, ExchangeApiKey). Blocks up to the timeout.
  template <class Req, class Resp>
  absl::StatusOr<Resp> CallPublic(Method<Req, Resp> method, const Req& req) {
    return (auth_.*method)(req, client::CallContext());
  }

  // The stored session, refreshed first when expired. Error: UNAUTHENTICATED when there is none.
  absl::StatusOr<StoredToken> CurrentToken();

  // The stored session without refreshing; nullopt when logged out.
  absl::StatusOr<std::optional<StoredToken>> StoredSession();

  // Stores a Login answer as the current session. Error: UNAVAILABLE for file I/O failures.
  absl::Status SaveLogin(const authpb::LoginResponse& resp, const std::string& user_name);
  // Stores an ExchangeApiKey answer, which has no refresh token, as the current session.
  absl::Status SaveApiKeyExchange(const authpb::ExchangeApiKeyResponse& resp);
  absl::Status ClearToken();

  const std::string& auth_addr() const { return auth_addr_; }

 private:
  // Whether an UNAUTHENTICATED answer to `token` may be cured by one refresh.
  bool MayRefresh(const StoredToken& token) const;
  absl::Status Refresh(StoredToken& token);
  absl::Status Save(StoredToken token);

  AuthClient auth_;
  TokenStore store_;
  const Clock& clock_;
  std::string auth_addr_;
  std::optional<std::string> env_token_;
  std::optional<StoredToken> cached_;  // loaded on first use
  bool refreshed_ = false;             // at most one refresh per process
};

template <class Req, class Resp>
absl::StatusOr<Resp> Session::Call(Method<Req, Resp> method, const Req& req) {
  GPUAAS_ASSIGN_OR_RETURN(StoredToken token, CurrentToken());
  absl::StatusOr<Resp> resp =
      (auth_.*method)(req, client::CallContext().set_bearer_token(token.access_token));
  // The clock may disagree with the server's, or the token was revoked early: one refresh and
  // retry is safe because UNAUTHENTICATED means the server did nothing.
  if (absl::IsUnauthenticated(resp.status()) && MayRefresh(token)) {
    GPUAAS_RETURN_IF_ERROR(Refresh(token));
    resp = (auth_.*method)(req, client::CallContext().set_bearer_token(token.access_token));
  }
  return resp;
}

}  // namespace gpuaas::ctl

// A logged-in conversation with the auth service: every call gets a deadline and the bearer
// token, and an expired access token is refreshed (Refresh RPC) and saved before it is used,
// so long-running scripts keep working without a new login.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include <grpcpp/grpcpp.h>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/common/clock.h"
#include "tools/gpuaasctl/token_store.h"

namespace gpuaas::ctl {

namespace authpb = ::gpuaas::auth::v1;

// Refresh this long before expiry, so a token does not expire between the check and the call.
inline constexpr absl::Duration kRefreshSkew = absl::Seconds(30);

absl::Status FromGrpc(const grpc::Status& s);

class Session final {
 public:
  using Stub = authpb::AuthService::StubInterface;
  template <class Req, class Resp>
  using Method = grpc::Status (Stub::*)(grpc::ClientContext*, const Req&, Resp*);

  // `env_token` (from $GPUAAS_TOKEN) overrides the token file and is never refreshed: for
  // scripts that hold a token from an API-key exchange.
  Session(std::unique_ptr<Stub> stub, TokenStore store, const Clock& clock, absl::Duration timeout,
          std::string auth_addr, std::optional<std::string> env_token);

  // An authenticated call. Errors: the server's code; UNAUTHENTICATED when not logged in or
  // the session can no longer be refreshed. Blocks up to the timeout (twice when it refreshes).
  template <class Req, class Resp>
  absl::Status Call(Method<Req, Resp> method, const Req& req, Resp& resp);

  // A call without a token (Login, Refresh, ExchangeApiKey). Blocks up to the timeout.
  template <class Req, class Resp>
  absl::Status CallPublic(Method<Req, Resp> method, const Req& req, Resp& resp) {
    auto ctx = NewContext(nullptr);
    return FromGrpc(((*stub_).*method)(ctx.get(), req, &resp));
  }

  // The stored session, refreshed first when expired. Error: UNAUTHENTICATED when there is none.
  absl::StatusOr<StoredToken> CurrentToken();

  // The stored session without refreshing; nullopt when logged out.
  absl::StatusOr<std::optional<StoredToken>> StoredSession();

  // Stores a Login / ExchangeApiKey answer as the current session.
  absl::Status SaveToken(const authpb::TokenResponse& resp, const std::string& user_name);
  absl::Status ClearToken();

  const std::string& auth_addr() const { return auth_addr_; }

 private:
  std::unique_ptr<grpc::ClientContext> NewContext(const std::string* bearer) const;
  absl::Status Refresh(StoredToken& token);

  std::unique_ptr<Stub> stub_;
  TokenStore store_;
  const Clock& clock_;
  absl::Duration timeout_;
  std::string auth_addr_;
  std::optional<std::string> env_token_;
  std::optional<StoredToken> cached_;  // loaded on first use
  bool refreshed_ = false;             // at most one refresh per process
};

template <class Req, class Resp>
absl::Status Session::Call(Method<Req, Resp> method, const Req& req, Resp& resp) {
  absl::StatusOr<StoredToken> token = CurrentToken();
  if (!token.ok()) {
    return token.status();
  }
  auto ctx = NewContext(&token->access_token);
  grpc::Status s = ((*stub_).*method)(ctx.get(), req, &resp);
  // The clock may disagree with the server's, or the token was revoked early: one refresh and
  // retry is safe because UNAUTHENTICATED means the server did nothing.
  if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED && !env_token_ &&
      !token->refresh_token.empty() && !refreshed_) {
    if (absl::Status r = Refresh(*token); !r.ok()) {
      return r;
    }
    ctx = NewContext(&token->access_token);
    resp.Clear();
    s = ((*stub_).*method)(ctx.get(), req, &resp);
  }
  return FromGrpc(s);
}

}  // namespace gpuaas::ctl

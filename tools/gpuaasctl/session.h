// A logged-in conversation with the gpuaas services: every call goes through a typed client
// (client::AuthClient, StockClient, StorageClient, InstanceClient: deadline, status mapping) with
// the session's bearer token, and an expired access token is refreshed (the auth service's Refresh
// RPC) and saved before it is used, so long-running scripts keep working without a new login. The
// token from `gpuaasctl login` is good for every service: each verifies it against the auth
// service's keys.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.pb.h"
#include "libs/client/auth_client.h"
#include "libs/client/instance_client.h"
#include "libs/client/stock_client.h"
#include "libs/client/storage_client.h"
#include "libs/common/clock.h"
#include "libs/common/status_macros.h"
#include "tools/gpuaasctl/token_store.h"

namespace gpuaas::ctl {

namespace authpb = ::gpuaas::auth::v1;
using AuthClient = ::gpuaas::client::AuthClient;
using StockClient = ::gpuaas::client::StockClient;
using StorageClient = ::gpuaas::client::StorageClient;
using InstanceClient = ::gpuaas::client::InstanceClient;

// Refresh this long before expiry, so a token does not expire between the check and the call.
inline constexpr absl::Duration kRefreshSkew = absl::Seconds(30);

class Session final {
 public:
  // A typed client's method: `&AuthClient::GetTenant`, `&StockClient::GetSpec` ...
  template <class Client, class Req, class Resp>
  using ClientMethod = absl::StatusOr<Resp> (Client::*)(const Req&,
                                                        const client::CallContext&) const;
  template <class Req, class Resp>
  using Method = ClientMethod<AuthClient, Req, Resp>;
  template <class Req, class Resp>
  using StockMethod = ClientMethod<StockClient, Req, Resp>;
  template <class Req, class Resp>
  using StorageMethod = ClientMethod<StorageClient, Req, Resp>;
  template <class Req, class Resp>
  using InstanceMethod = ClientMethod<InstanceClient, Req, Resp>;

  // Where each service is, for messages.
  struct Addresses {
    std::string auth;
    std::string stock;
    std::string storage;
    std::string instance;
  };

  // The clients' default timeouts bound every call. `env_token` (from $GPUAAS_TOKEN) overrides
  // the token file and is never refreshed: for scripts that hold a token from an API-key
  // exchange. `clock` judges token expiry only; it must outlive the session.
  Session(AuthClient auth, StockClient stock, StorageClient storage, InstanceClient instance,
          TokenStore store, const Clock& clock, Addresses addresses,
          std::optional<std::string> env_token);

  // An authenticated call to the auth, stock, storage or instance service. Errors: the server's
  // code; UNAUTHENTICATED when not logged in or the session can no longer be refreshed; UNAVAILABLE
  // naming the service and its address when it cannot be reached. Blocks up to the timeout
  // (twice when it refreshes).
  template <class Req, class Resp>
  absl::StatusOr<Resp> Call(Method<Req, Resp> method, const Req& req) {
    return CallWithToken(auth_, method, req, "auth", addresses_.auth);
  }
  template <class Req, class Resp>
  absl::StatusOr<Resp> Call(StockMethod<Req, Resp> method, const Req& req) {
    return CallWithToken(stock_, method, req, "stock", addresses_.stock);
  }
  template <class Req, class Resp>
  absl::StatusOr<Resp> Call(StorageMethod<Req, Resp> method, const Req& req) {
    return CallWithToken(storage_, method, req, "storage", addresses_.storage);
  }
  template <class Req, class Resp>
  absl::StatusOr<Resp> Call(InstanceMethod<Req, Resp> method, const Req& req) {
    return CallWithToken(instance_, method, req, "instance", addresses_.instance);
  }

  // Follows WatchInstances until `on_change` returns false or the stream ends (its status).
  absl::Status WatchInstances(
      const client::instancepb::WatchInstancesRequest& req,
      const std::function<bool(const client::instancepb::InstanceChange&)>& on_change);

  // Follows GetInstanceLogs until `on_chunk` returns false or the stream ends (its status).
  absl::Status GetInstanceLogs(
      const client::instancepb::GetInstanceLogsRequest& req,
      const std::function<bool(const client::instancepb::LogChunk&)>& on_chunk);

  // Opens a terminal or port-forward session into an instance with the session's token
  // (refreshed first when expired). Errors: UNAUTHENTICATED when not logged in.
  absl::StatusOr<client::ExecCall> OpenExec();
  absl::StatusOr<client::PortForwardCall> OpenPortForward();

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

  const std::string& auth_addr() const { return addresses_.auth; }
  const std::string& stock_addr() const { return addresses_.stock; }
  const std::string& storage_addr() const { return addresses_.storage; }
  const std::string& instance_addr() const { return addresses_.instance; }

 private:
  template <class Client, class Req, class Resp>
  absl::StatusOr<Resp> CallWithToken(const Client& target, ClientMethod<Client, Req, Resp> method,
                                     const Req& req, std::string_view service,
                                     const std::string& address);

  // Whether an UNAUTHENTICATED answer to `token` may be cured by one refresh.
  bool MayRefresh(const StoredToken& token) const;
  absl::Status Refresh(StoredToken& token);
  absl::Status Save(StoredToken token);

  AuthClient auth_;
  StockClient stock_;
  StorageClient storage_;
  InstanceClient instance_;
  TokenStore store_;
  const Clock& clock_;
  Addresses addresses_;
  std::optional<std::string> env_token_;
  std::optional<StoredToken> cached_;  // loaded on first use
  bool refreshed_ = false;             // at most one refresh per process
};

// With several services in play, a failure that is about the service rather than the request says
// which service it is: UNAVAILABLE becomes "stock service at localhost:17052: failed to
// connect ...", and an UNIMPLEMENTED without a message (a server older than this gpuaasctl)
// says so. Every other status is returned as it is.
absl::Status NameTheService(absl::Status status, std::string_view service,
                            const std::string& address);

template <class Client, class Req, class Resp>
absl::StatusOr<Resp> Session::CallWithToken(const Client& target,
                                            ClientMethod<Client, Req, Resp> method, const Req& req,
                                            std::string_view service, const std::string& address) {
  GPUAAS_ASSIGN_OR_RETURN(StoredToken token, CurrentToken());
  absl::StatusOr<Resp> resp =
      (target.*method)(req, client::CallContext().set_bearer_token(token.access_token));
  // The clock may disagree with the server's, or the token was revoked early: one refresh and
  // retry is safe because UNAUTHENTICATED means the server did nothing.
  if (absl::IsUnauthenticated(resp.status()) && MayRefresh(token)) {
    GPUAAS_RETURN_IF_ERROR(Refresh(token));
    resp = (target.*method)(req, client::CallContext().set_bearer_token(token.access_token));
  }
  if (!resp.ok()) {
    return NameTheService(resp.status(), service, address);
  }
  return resp;
}

}  // namespace gpuaas::ctl

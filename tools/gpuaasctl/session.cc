#include "tools/gpuaasctl/session.h"

#include "absl/strings/str_cat.h"
#include "libs/common/proto_time.h"
#include "tools/gpuaasctl/roles.h"

namespace gpuaas::ctl {
namespace {

constexpr absl::string_view kNotLoggedIn = "not logged in: run `gpuaasctl login`";

// LoginResponse, RefreshResponse and ExchangeApiKeyResponse carry the same token fields.
// Fields the server left empty keep their value in `t`, so a refresh answer that omits the
// tenant or role does not erase them.
template <class Resp>
void CopyTokenFields(const Resp& resp, StoredToken& t) {
  t.access_token = resp.access_token();
  t.expire_time =
      resp.has_expire_time() ? FromProtoTime(resp.expire_time()) : absl::InfiniteFuture();
  if (!resp.tenant_id().empty()) {
    t.tenant_id = resp.tenant_id();
  }
  if (resp.role() != common::v1::ROLE_UNSPECIFIED) {
    t.role = RoleDisplayName(resp.role());
  }
}

}  // namespace

absl::Status NameTheService(absl::Status status, std::string_view service,
                            const std::string& address) {
  if (absl::IsUnavailable(status)) {
    return absl::UnavailableError(
        absl::StrCat(std::string(service), " service at ", address, ": ", status.message()));
  }
  if (absl::IsUnimplemented(status) && status.message().empty()) {
    return absl::UnimplementedError(
        absl::StrCat("the ", std::string(service), " service at ", address,
                     " does not implement this call (is it older than this gpuaasctl?)"));
  }
  return status;
}

Session::Session(AuthClient auth, StockClient stock, StorageClient storage, InstanceClient instance,
                 TokenStore store, const Clock& clock, Addresses addresses,
                 std::optional<std::string> env_token)
    : auth_(std::move(auth)),
      stock_(std::move(stock)),
      storage_(std::move(storage)),
      instance_(std::move(instance)),
      store_(std::move(store)),
      clock_(clock),
      addresses_(std::move(addresses)),
      env_token_(std::move(env_token)) {}

absl::StatusOr<std::optional<StoredToken>> Session::StoredSession() {
  if (env_token_) {
    StoredToken t;
    t.auth_addr = addresses_.auth;
    t.access_token = *env_token_;
    t.expire_time = absl::InfiniteFuture();
    return std::optional<StoredToken>(std::move(t));
  }
  if (cached_) {
    return cached_;
  }
  absl::StatusOr<std::optional<StoredToken>> loaded = store_.Load();
  if (loaded.ok() && loaded->has_value()) {
    cached_ = **loaded;
  }
  return loaded;
}

absl::Status Session::WatchInstances(
    const client::instancepb::WatchInstancesRequest& req,
    const std::function<bool(const client::instancepb::InstanceChange&)>& on_change) {
  GPUAAS_ASSIGN_OR_RETURN(StoredToken token, CurrentToken());
  absl::Status status = instance_.WatchInstances(
      req, on_change, client::CallContext().set_bearer_token(token.access_token));
  return NameTheService(status, "instance", addresses_.instance);
}

absl::Status Session::GetInstanceLogs(
    const client::instancepb::GetInstanceLogsRequest& req,
    const std::function<bool(const client::instancepb::LogChunk&)>& on_chunk) {
  GPUAAS_ASSIGN_OR_RETURN(StoredToken token, CurrentToken());
  absl::Status status = instance_.GetInstanceLogs(
      req, on_chunk, client::CallContext().set_bearer_token(token.access_token));
  return NameTheService(status, "instance", addresses_.instance);
}

absl::StatusOr<client::ExecCall> Session::OpenExec() {
  GPUAAS_ASSIGN_OR_RETURN(StoredToken token, CurrentToken());
  return instance_.OpenExec(client::CallContext().set_bearer_token(token.access_token));
}

absl::StatusOr<client::PortForwardCall> Session::OpenPortForward() {
  GPUAAS_ASSIGN_OR_RETURN(StoredToken token, CurrentToken());
  return instance_.OpenPortForward(client::CallContext().set_bearer_token(token.access_token));
}

absl::StatusOr<StoredToken> Session::CurrentToken() {
  GPUAAS_ASSIGN_OR_RETURN(std::optional<StoredToken> stored, StoredSession());
  if (!stored.has_value()) {
    return absl::UnauthenticatedError(kNotLoggedIn);
  }
  StoredToken token = *std::move(stored);
  if (!token.Expired(clock_.Now(), kRefreshSkew)) {
    return token;
  }
  if (token.refresh_token.empty()) {
    return absl::UnauthenticatedError("session expired: run `gpuaasctl login`");
  }
  GPUAAS_RETURN_IF_ERROR(Refresh(token));
  return token;
}

bool Session::MayRefresh(const StoredToken& token) const {
  return !env_token_ && !token.refresh_token.empty() && !refreshed_;
}

absl::Status Session::Refresh(StoredToken& token) {
  refreshed_ = true;
  authpb::RefreshRequest req;
  req.set_refresh_token(token.refresh_token);
  absl::StatusOr<authpb::RefreshResponse> resp = CallPublic(&AuthClient::Refresh, req);
  if (absl::IsUnauthenticated(resp.status()) || absl::IsNotFound(resp.status())) {
    return absl::UnauthenticatedError(
        absl::StrCat("session expired (", resp.status().message(), "): run `gpuaasctl login`"));
  }
  GPUAAS_RETURN_IF_ERROR(resp.status());
  CopyTokenFields(*resp, token);
  // A server that does not rotate refresh tokens answers with an empty one: keep ours.
  if (!resp->refresh_token().empty()) {
    token.refresh_token = resp->refresh_token();
  }
  return Save(token);
}

absl::Status Session::SaveLogin(const authpb::LoginResponse& resp, const std::string& user_name) {
  StoredToken t;
  t.user_name = user_name;
  CopyTokenFields(resp, t);
  t.refresh_token = resp.refresh_token();
  return Save(std::move(t));
}

absl::Status Session::SaveApiKeyExchange(const authpb::ExchangeApiKeyResponse& resp) {
  StoredToken t;
  CopyTokenFields(resp, t);
  return Save(std::move(t));
}

absl::Status Session::Save(StoredToken token) {
  token.auth_addr = addresses_.auth;
  cached_ = token;
  return store_.Save(token);
}

absl::Status Session::ClearToken() {
  cached_.reset();
  return store_.Clear();
}

}  // namespace gpuaas::ctl

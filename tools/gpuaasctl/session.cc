#include "tools/gpuaasctl/session.h"

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/roles.h"

namespace gpuaas::ctl {
namespace {

constexpr absl::string_view kNotLoggedIn = "not logged in: run `gpuaasctl login`";

absl::Time FromProto(const google::protobuf::Timestamp& ts) {
  return absl::FromUnixSeconds(ts.seconds()) + absl::Nanoseconds(ts.nanos());
}

}  // namespace

absl::Status FromGrpc(const grpc::Status& s) {
  if (s.ok()) {
    return absl::OkStatus();
  }
  // grpc::StatusCode and absl::StatusCode are numerically identical by design.
  return absl::Status(static_cast<absl::StatusCode>(s.error_code()), s.error_message());
}

Session::Session(std::unique_ptr<Stub> stub, TokenStore store, const Clock& clock,
                 absl::Duration timeout, std::string auth_addr,
                 std::optional<std::string> env_token)
    : stub_(std::move(stub)),
      store_(std::move(store)),
      clock_(clock),
      timeout_(timeout),
      auth_addr_(std::move(auth_addr)),
      env_token_(std::move(env_token)) {}

std::unique_ptr<grpc::ClientContext> Session::NewContext(const std::string* bearer) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(clock_.Now() + timeout_));
  if (bearer != nullptr) {
    ctx->AddMetadata("authorization", absl::StrCat("Bearer ", *bearer));
  }
  return ctx;
}

absl::StatusOr<std::optional<StoredToken>> Session::StoredSession() {
  if (env_token_) {
    StoredToken t;
    t.auth_addr = auth_addr_;
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

absl::StatusOr<StoredToken> Session::CurrentToken() {
  absl::StatusOr<std::optional<StoredToken>> stored = StoredSession();
  if (!stored.ok()) {
    return stored.status();
  }
  if (!stored->has_value()) {
    return absl::UnauthenticatedError(kNotLoggedIn);
  }
  StoredToken token = **stored;
  if (!token.Expired(clock_.Now(), kRefreshSkew)) {
    return token;
  }
  if (token.refresh_token.empty()) {
    return absl::UnauthenticatedError("session expired: run `gpuaasctl login`");
  }
  if (absl::Status s = Refresh(token); !s.ok()) {
    return s;
  }
  return token;
}

absl::Status Session::Refresh(StoredToken& token) {
  refreshed_ = true;
  authpb::RefreshRequest req;
  req.set_refresh_token(token.refresh_token);
  authpb::TokenResponse resp;
  absl::Status s = CallPublic(&Stub::Refresh, req, resp);
  if (absl::IsUnauthenticated(s) || absl::IsNotFound(s)) {
    return absl::UnauthenticatedError(
        absl::StrCat("session expired (", s.message(), "): run `gpuaasctl login`"));
  }
  if (!s.ok()) {
    return s;
  }
  token.access_token = resp.access_token();
  // A server that does not rotate refresh tokens answers with an empty one: keep ours.
  if (!resp.refresh_token().empty()) {
    token.refresh_token = resp.refresh_token();
  }
  token.expire_time = FromProto(resp.expire_time());
  if (!resp.tenant_id().empty()) {
    token.tenant_id = resp.tenant_id();
  }
  if (resp.role() != common::v1::ROLE_UNSPECIFIED) {
    token.role = RoleDisplayName(resp.role());
  }
  cached_ = token;
  return store_.Save(token);
}

absl::Status Session::SaveToken(const authpb::TokenResponse& resp, const std::string& user_name) {
  StoredToken t;
  t.auth_addr = auth_addr_;
  t.user_name = user_name;
  t.tenant_id = resp.tenant_id();
  t.role = RoleDisplayName(resp.role());
  t.access_token = resp.access_token();
  t.refresh_token = resp.refresh_token();
  t.expire_time = resp.has_expire_time() ? FromProto(resp.expire_time()) : absl::InfiniteFuture();
  cached_ = t;
  return store_.Save(t);
}

absl::Status Session::ClearToken() {
  cached_.reset();
  return store_.Clear();
}

}  // namespace gpuaas::ctl

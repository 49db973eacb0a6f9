#include "services/gateway/session_endpoints.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "services/gateway/request_transcoder.h"
#include "services/gateway/status_json.h"

namespace gpuaas::gateway {
namespace {

namespace authpb = ::gpuaas::auth::v1;

constexpr absl::Duration kRefreshMemory = absl::Seconds(30);

}  // namespace

bool SessionEndpoints::Serves(absl::string_view path) {
  return path == kSessionPath || path == absl::StrCat(kSessionPath, ":refresh");
}

void SessionEndpoints::Handle(const http::HttpRequest& req, absl::string_view path,
                              absl::string_view body, bool https, http::HttpResponse& res) {
  res.set_header("Cache-Control", "no-store");
  // Logging in, renewing or ending a session from another site's page would let that site
  // choose whose session the browser holds.
  if (IsCrossSite(req, https)) {
    return Fail(res,
                absl::PermissionDeniedError("a request from another site cannot use the session"));
  }
  const bool refresh = absl::EndsWith(path, ":refresh");
  if (req.method == "POST" && !refresh) {
    return Login(req, body, res);
  }
  if (req.method == "GET" && !refresh) {
    return Current(req, res);
  }
  // What follows acts on the session, so it needs the session's CSRF token as /v1 does.
  absl::StatusOr<std::string> authorization = AuthorizationOf(req, https);
  if (!authorization.ok()) {
    return Fail(res, authorization.status());
  }
  if (req.method == "POST" && refresh) {
    return Refresh(req, body, res);
  }
  if (req.method == "DELETE" && !refresh) {
    return Logout(req, res);
  }
  FailMethodNotAllowed(res, req.method, path);
}

void SessionEndpoints::Login(const http::HttpRequest& req, absl::string_view body,
                             http::HttpResponse& res) {
  // A form another site posts arrives as form data: only JSON logs in.
  if (!absl::StartsWithIgnoreCase(req.get_header_value("Content-Type"), "application/json")) {
    return Fail(res, absl::InvalidArgumentError("Content-Type: want application/json"));
  }
  authpb::LoginRequest login;
  if (absl::Status s = ParseJsonBody(body, login); !s.ok()) {
    return Fail(res, s);
  }
  client::CallContext call;
  absl::StatusOr<authpb::LoginResponse> tokens = auth_.Login(login, vouching_.Vouch(req, call));
  if (!tokens.ok()) {
    return Fail(res, tokens.status());
  }
  Started(tokens->access_token(), tokens->refresh_token(), res);
}

void SessionEndpoints::Refresh(const http::HttpRequest& req, absl::string_view body,
                               http::HttpResponse& res) {
  authpb::RefreshRequest refresh;
  if (absl::Status s = ParseJsonBody(body, refresh); !s.ok()) {
    return Fail(res, s);
  }
  std::optional<std::string> token = CookieValue(req, kRefreshCookie);
  if (!token || token->empty()) {
    return Fail(res, absl::UnauthenticatedError("no session: log in"));
  }
  refresh.set_refresh_token(*token);
  const std::string key = absl::StrCat(*token, "\n", body);
  std::shared_ptr<RecentRefresh> entry;
  bool mine = false;
  {
    absl::MutexLock lock(&refresh_mu_);
    const absl::Time now = clock_.Now();
    absl::erase_if(recent_, [&](const auto& kv) { return now - kv.second->at > kRefreshMemory; });
    std::shared_ptr<RecentRefresh>& found = recent_[key];
    if (found == nullptr) {
      found = std::make_shared<RecentRefresh>();
      found->at = now;
      mine = true;
    }
    entry = found;
  }
  if (mine) {
    entry->answer = auth_.Refresh(refresh, client::CallContext());
    if (!entry->answer.ok()) {
      // Not remembered: a later try asks again.
      absl::MutexLock lock(&refresh_mu_);
      if (auto it = recent_.find(key); it != recent_.end() && it->second == entry) {
        recent_.erase(it);
      }
    }
    entry->done.Notify();
  } else {
    entry->done.WaitForNotification();
  }
  if (!entry->answer.ok()) {
    for (const std::string& c : ClearedSessionCookies(cookies_)) res.set_header("Set-Cookie", c);
    return Fail(res, entry->answer.status());
  }
  Started(entry->answer->access_token(), entry->answer->refresh_token(), res);
}

void SessionEndpoints::Logout(const http::HttpRequest& req, http::HttpResponse& res) {
  if (std::optional<std::string> token = CookieValue(req, kRefreshCookie);
      token && !token->empty()) {
    authpb::LogoutRequest logout;
    logout.set_refresh_token(*token);
    // Ended already or never valid: the cookies go either way.
    (void)auth_.Logout(logout, client::CallContext());
  }
  for (const std::string& c : ClearedSessionCookies(cookies_)) res.set_header("Set-Cookie", c);
  res.status = 204;
}

void SessionEndpoints::Current(const http::HttpRequest& req, http::HttpResponse& res) {
  std::optional<std::string> token = CookieValue(req, kSessionCookie);
  if (!token || token->empty()) {
    return Fail(res, absl::UnauthenticatedError("no session: log in"));
  }
  absl::StatusOr<authpb::WhoAmIResponse> me =
      auth_.WhoAmI({}, client::CallContext().set_bearer_token(*token));
  if (!me.ok()) {
    return Fail(res, me.status());
  }
  res.status = 200;
  res.set_content(MessageToJson(*me), "application/json");
}

void SessionEndpoints::Started(const std::string& access_token, const std::string& refresh_token,
                               http::HttpResponse& res) {
  absl::StatusOr<authpb::WhoAmIResponse> me =
      auth_.WhoAmI({}, client::CallContext().set_bearer_token(access_token));
  if (!me.ok()) {
    return Fail(res, me.status());
  }
  for (const std::string& c : SessionCookies(access_token, refresh_token, cookies_)) {
    res.set_header("Set-Cookie", c);
  }
  res.status = 200;
  res.set_content(MessageToJson(*me), "application/json");
}

}  // namespace gpuaas::gateway

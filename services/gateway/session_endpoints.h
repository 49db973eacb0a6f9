// The console's login: /api/session turns a user name and password into the session cookies
// (browser_session.h) and back.
//   POST   /api/session          {"user_name", "password", "tenant_id"?} → WhoAmI + cookies
//   POST   /api/session:refresh  {"tenant_id"?} → WhoAmI + new cookies (a tenant_id switches)
//   GET    /api/session          → WhoAmI, or 401
//   DELETE /api/session          → 204, the session ended and its cookies cleared
// Every answer is JSON; errors are google.rpc.Status bodies as on /v1.
#pragma once

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/time.h"
#include "libs/client/auth_client.h"
#include "libs/common/clock.h"
#include "libs/http/http_message.h"
#include "services/gateway/browser_session.h"
#include "services/gateway/client_address.h"

namespace gpuaas::gateway {

inline constexpr absl::string_view kSessionPath = "/api/session";

class SessionEndpoints final {
 public:
  // `vouching` (kept by reference) tells auth the address a login came from.
  SessionEndpoints(const client::AuthClient& auth, CookieOptions cookies, const Clock& clock,
                   const ClientVouching& vouching)
      : auth_(auth), cookies_(cookies), clock_(clock), vouching_(vouching) {}

  // Whether `path` is one of ours.
  static bool Serves(absl::string_view path);
  void Handle(const http::HttpRequest& req, absl::string_view path, absl::string_view body,
              bool https, http::HttpResponse& res);

 private:
  void Login(const http::HttpRequest& req, absl::string_view body, http::HttpResponse& res);
  void Refresh(const http::HttpRequest& req, absl::string_view body, http::HttpResponse& res);
  void Logout(const http::HttpRequest& req, http::HttpResponse& res);
  void Current(const http::HttpRequest& req, http::HttpResponse& res);
  // Answers WhoAmI for `access_token` with the cookies of the new session.
  void Started(const std::string& access_token, const std::string& refresh_token,
               http::HttpResponse& res);

  // Two tabs refreshing at once present the same refresh token; the second would look like a
  // replayed (stolen) token and end the session. So a refresh is remembered for a short while
  // and a repeat gets the same answer, waiting for it while it is under way. The call is made
  // outside refresh_mu_: one session's slow refresh holds up no other session's.
  struct RecentRefresh {
    absl::Time at;
    absl::Notification done;
    absl::StatusOr<auth::v1::RefreshResponse> answer;  // once done
  };
  absl::Mutex refresh_mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<RecentRefresh>> recent_
      ABSL_GUARDED_BY(refresh_mu_);

  const client::AuthClient& auth_;
  CookieOptions cookies_;
  const Clock& clock_;
  const ClientVouching& vouching_;
};

}  // namespace gpuaas::gateway

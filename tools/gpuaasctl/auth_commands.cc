// login, logout, whoami: the session lifecycle.
#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/roles.h"
#include "tools/gpuaasctl/secret_input.h"

namespace gpuaas::ctl {
namespace {

struct LoginFlags {
  std::string user;
  std::string password;
  std::string password_file;
  std::string tenant;
};

// What login prints: the token response without the tokens, which belong in the token file
// only (terminal scrollback and CI logs are not private).
authpb::LoginResponse Redacted(authpb::LoginResponse resp) {
  resp.clear_access_token();
  resp.clear_refresh_token();
  return resp;
}

absl::Status Login(Context& ctx, Session& session, const LoginFlags& f) {
  absl::StatusOr<std::string> password = ReadSecret("Password", f.password, f.password_file);
  if (!password.ok()) {
    return password.status();
  }
  authpb::LoginRequest req;
  req.set_user_name(f.user);
  req.set_password(*password);
  req.set_tenant_id(f.tenant);
  GPUAAS_ASSIGN_OR_RETURN(authpb::LoginResponse resp, session.CallPublic(&AuthClient::Login, req));
  GPUAAS_RETURN_IF_ERROR(session.SaveLogin(resp, f.user));
  return ctx.Print(Redacted(resp), [&] {
    Fields out;
    out.Add("logged in as", f.user);
    out.Add("tenant", resp.tenant_id());
    out.Add("role", RoleDisplayName(resp.role()));
    out.Add("expires", FormatTimestamp(resp.expire_time()));
    out.Add("server", session.auth_addr());
    return out.Render();
  });
}

absl::Status Logout(Context& ctx, Session& session) {
  absl::StatusOr<std::optional<StoredToken>> stored = session.StoredSession();
  // An unreadable token file is exactly what logout should clean up.
  if (!stored.ok() || !stored->has_value()) {
    if (absl::Status s = session.ClearToken(); !s.ok()) {
      return s;
    }
    ctx.Note("not logged in");
    return absl::OkStatus();
  }
  absl::Status server = absl::OkStatus();
  if (!(*stored)->refresh_token.empty()) {
    authpb::LogoutRequest req;
    req.set_refresh_token((*stored)->refresh_token);
    server = session.Call(&AuthClient::Logout, req).status();
  }
  // Forget the local session even when the server is unreachable: the user asked to log out
  // here, and the refresh token expires on its own. The server error is still reported.
  if (absl::Status s = session.ClearToken(); !s.ok()) {
    return s;
  }
  if (!server.ok() && !absl::IsUnauthenticated(server)) {
    return absl::Status(server.code(), absl::StrCat("local session removed, but the server said: ",
                                                    server.message()));
  }
  ctx.Note("logged out");
  return absl::OkStatus();
}

absl::Status WhoAmI(Context& ctx, Session& session) {
  GPUAAS_ASSIGN_OR_RETURN(authpb::WhoAmIResponse resp,
                          session.Call(&AuthClient::WhoAmI, authpb::WhoAmIRequest()));
  return ctx.Print(resp, [&] {
    Fields who;
    who.Add("user", resp.user_name());
    who.Add("user id", resp.user_id());
    who.Add("tenant", resp.tenant_id());
    who.Add("role", RoleDisplayName(resp.role()));
    if (!resp.api_key_id().empty()) {
      who.Add("api key", resp.api_key_id());
    }
    who.Add("server", session.auth_addr());
    std::string text = who.Render();
    if (resp.memberships_size() > 0) {
      Table t({"TENANT", "ROLE", "SINCE"});
      for (const auto& m : resp.memberships()) {
        t.AddRow({m.tenant_id(), RoleDisplayName(m.role()), FormatTimestamp(m.create_time())});
      }
      absl::StrAppend(&text, "\n", t.Render());
    }
    return text;
  });
}

}  // namespace

void AddAuthCommands(CLI::App& root, Context& ctx) {
  auto login = std::make_shared<LoginFlags>();
  CLI::App* sub = root.add_subcommand("login", "log in and keep the token for later commands");
  sub->add_option("-u,--user", login->user, "user name")->required();
  auto* pw = sub->add_option("--password", login->password,
                             "password (visible in ps; prefer --password-file or the prompt)");
  sub->add_option("--password-file", login->password_file, "read the password from this file")
      ->excludes(pw);
  sub->add_option("-t,--tenant", login->tenant, "tenant the token acts for");
  OnRun(sub, ctx, [&ctx, login](Session& s) { return Login(ctx, s, *login); });

  sub = root.add_subcommand("logout", "revoke the refresh token and forget the session");
  OnRun(sub, ctx, [&ctx](Session& s) { return Logout(ctx, s); });

  sub = root.add_subcommand("whoami", "show who the current token belongs to");
  OnRun(sub, ctx, [&ctx](Session& s) { return WhoAmI(ctx, s); });

  // For curl and scripts: `curl -H "Authorization: Bearer $(gpuaasctl token)" ...`.
  sub = root.add_subcommand("token", "print a current access token (refreshed when expired)");
  OnRun(sub, ctx, [](Session& s) -> absl::Status {
    GPUAAS_ASSIGN_OR_RETURN(StoredToken token, s.CurrentToken());
    std::cout << token.access_token << "\n";
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::ctl

// users list|get|create|update|set-ssh-keys|delete
#include <iostream>
#include <iterator>
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "libs/common/files.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/roles.h"
#include "tools/gpuaasctl/secret_input.h"

namespace gpuaas::ctl {
namespace {

struct UserFlags {
  std::string user_id;
  std::string user_name;
  std::string display_name;
  std::string password;
  std::string password_file;
  std::string tenant;
  std::string role;
  std::string global_role;
  std::string request_id;
  bool disable = false;
  bool enable = false;
  std::vector<std::string> key_files;
  bool clear_keys = false;
  PageFlags page;
  CLI::Option* display_name_opt = nullptr;
};

std::string UserTable(const google::protobuf::RepeatedPtrField<authpb::User>& users) {
  Table t(
      {"USER ID", "USER NAME", "DISPLAY NAME", "GLOBAL ROLE", "DISABLED", "SSH KEYS", "CREATED"});
  for (const auto& u : users) {
    t.AddRow({u.user_id(), u.user_name(), u.display_name(), RoleDisplayName(u.global_role()),
              u.disabled() ? "yes" : "no", std::to_string(u.ssh_public_keys_size()),
              FormatTimestamp(u.create_time())});
  }
  return t.Render();
}

absl::Status PrintUser(Context& ctx, const authpb::User& user) {
  return ctx.Print(user, [&] {
    google::protobuf::RepeatedPtrField<authpb::User> one;
    *one.Add() = user;
    return UserTable(one);
  });
}

void AddPasswordFlags(CLI::App* sub, UserFlags& f) {
  auto* pw =
      sub->add_option("--password", f.password, "password (visible in ps; prefer --password-file)");
  sub->add_option("--password-file", f.password_file, "read the password from this file")
      ->excludes(pw);
}

absl::Status Create(Context& ctx, Session& s, const UserFlags& f) {
  authpb::CreateUserRequest req;
  req.mutable_user()->set_user_name(f.user_name);
  req.mutable_user()->set_display_name(f.display_name);
  common::v1::Role global = common::v1::ROLE_UNSPECIFIED;
  if (absl::Status st = ParseRoleInto(f.global_role, global); !st.ok()) {
    return st;
  }
  req.mutable_user()->set_global_role(global);
  common::v1::Role role = common::v1::ROLE_UNSPECIFIED;
  if (absl::Status st = ParseRoleInto(f.role, role); !st.ok()) {
    return st;
  }
  req.set_tenant_id(f.tenant);
  req.set_role(role);
  absl::StatusOr<std::string> pw = ReadSecret("New user's password", f.password, f.password_file);
  if (!pw.ok()) {
    return pw.status();
  }
  req.set_password(*pw);
  req.set_request_id(RequestIdOrNew(f.request_id));
  GPUAAS_ASSIGN_OR_RETURN(authpb::User resp, s.Call(&AuthClient::CreateUser, req));
  return PrintUser(ctx, resp);
}

absl::Status Update(Context& ctx, Session& s, const UserFlags& f) {
  authpb::UpdateUserRequest req;
  authpb::User& user = *req.mutable_user();
  user.set_user_id(f.user_id);
  auto* mask = req.mutable_update_mask();
  if (f.display_name_opt->count() > 0) {
    user.set_display_name(f.display_name);
    mask->add_paths("display_name");
  }
  if (f.disable || f.enable) {
    user.set_disabled(f.disable);
    mask->add_paths("disabled");
  }
  if (!f.password.empty() || !f.password_file.empty()) {
    absl::StatusOr<std::string> pw = ReadSecret("Password", f.password, f.password_file);
    if (!pw.ok()) {
      return pw.status();
    }
    req.set_password(*pw);
    mask->add_paths("password");
  }
  if (!f.global_role.empty()) {
    common::v1::Role global = common::v1::ROLE_UNSPECIFIED;
    // "none" clears the global role, which no role name can express.
    if (f.global_role != "none") {
      if (absl::Status st = ParseRoleInto(f.global_role, global); !st.ok()) {
        return st;
      }
    }
    user.set_global_role(global);
    mask->add_paths("global_role");
  }
  if (mask->paths_size() == 0) {
    return absl::InvalidArgumentError(
        "nothing to update: give --display-name, --disable/--enable, --password(-file) or "
        "--global-role");
  }
  GPUAAS_ASSIGN_OR_RETURN(authpb::User resp, s.Call(&AuthClient::UpdateUser, req));
  return PrintUser(ctx, resp);
}

// The keys of `files` (`-` is stdin), one per line as in an authorized_keys file: blank lines
// and # comments are skipped; the server checks each key.
absl::Status ReadKeys(const std::vector<std::string>& files, authpb::User& user) {
  for (const std::string& file : files) {
    std::string text;
    if (file == "-") {
      text.assign(std::istreambuf_iterator<char>(std::cin), {});
    } else {
      GPUAAS_ASSIGN_OR_RETURN(text, ReadFile(file));
    }
    for (absl::string_view line : absl::StrSplit(text, '\n')) {
      line = absl::StripAsciiWhitespace(line);
      if (!line.empty() && line.front() != '#') user.add_ssh_public_keys(std::string(line));
    }
  }
  return absl::OkStatus();
}

absl::Status SetSshKeys(Context& ctx, Session& s, const UserFlags& f) {
  if (f.key_files.empty() != f.clear_keys) {
    return absl::InvalidArgumentError("give the key files (- for stdin), or --clear");
  }
  authpb::UpdateUserRequest req;
  authpb::User& user = *req.mutable_user();
  user.set_user_id(f.user_id);
  if (f.user_id == "me") {
    GPUAAS_ASSIGN_OR_RETURN(authpb::WhoAmIResponse me,
                            s.Call(&AuthClient::WhoAmI, authpb::WhoAmIRequest()));
    user.set_user_id(me.user_id());
  }
  GPUAAS_RETURN_IF_ERROR(ReadKeys(f.key_files, user));
  req.mutable_update_mask()->add_paths("ssh_public_keys");
  GPUAAS_ASSIGN_OR_RETURN(authpb::User resp, s.Call(&AuthClient::UpdateUser, req));
  return PrintUser(ctx, resp);
}

}  // namespace

void AddUserCommands(CLI::App& root, Context& ctx) {
  CLI::App* group = root.add_subcommand("users", "manage users")->require_subcommand(1);

  auto list = std::make_shared<UserFlags>();
  CLI::App* sub = group->add_subcommand("list", "list users");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    authpb::ListUsersResponse resp;
    GPUAAS_RETURN_IF_ERROR(
        ListPages(s, &AuthClient::ListUsers, authpb::ListUsersRequest(), list->page, resp));
    return ctx.Print(resp, [&] { return UserTable(resp.users()); });
  });

  auto get = std::make_shared<UserFlags>();
  sub = group->add_subcommand("get", "show one user");
  sub->add_option("user", get->user_id, "user id")->required();
  OnRun(sub, ctx, [&ctx, get](Session& s) {
    authpb::GetUserRequest req;
    req.set_user_id(get->user_id);
    GPUAAS_ASSIGN_OR_RETURN(authpb::User resp, s.Call(&AuthClient::GetUser, req));
    return PrintUser(ctx, resp);
  });

  auto create = std::make_shared<UserFlags>();
  sub =
      group->add_subcommand("create", "create a user (password from flag, file, prompt or stdin)");
  sub->add_option("name", create->user_name, "login name: [a-z0-9._-], 3..63")->required();
  sub->add_option("--display-name", create->display_name, "human-readable name");
  AddPasswordFlags(sub, *create);
  auto* tenant = sub->add_option("-t,--tenant", create->tenant, "also add to this tenant");
  AddRoleOption(sub, "--role", create->role, "role in --tenant")->needs(tenant);
  AddRoleOption(sub, "--global-role", create->global_role, "global role");
  sub->add_option("--request-id", create->request_id, "idempotency key (default: random)");
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto update = std::make_shared<UserFlags>();
  sub = group->add_subcommand("update", "change a user (only the flags given)");
  sub->add_option("user", update->user_id, "user id")->required();
  update->display_name_opt =
      sub->add_option("--display-name", update->display_name, "human-readable name");
  auto* disable = sub->add_flag("--disable", update->disable, "block logins");
  sub->add_flag("--enable", update->enable, "allow logins again")->excludes(disable);
  AddPasswordFlags(sub, *update);
  AddRoleOption(sub, "--global-role", update->global_role, "global role, or none");
  OnRun(sub, ctx, [&ctx, update](Session& s) { return Update(ctx, s, *update); });

  auto keys = std::make_shared<UserFlags>();
  sub = group->add_subcommand(
      "set-ssh-keys",
      "replace a user's SSH public keys (what its tenants' instances trust from their next start)");
  sub->add_option("user", keys->user_id, "user id, or me")->required();
  sub->add_option("files", keys->key_files, "files of public keys, one per line (- for stdin)");
  sub->add_flag("--clear", keys->clear_keys, "remove every key");
  OnRun(sub, ctx, [&ctx, keys](Session& s) { return SetSshKeys(ctx, s, *keys); });

  auto del = std::make_shared<UserFlags>();
  sub = group->add_subcommand("delete", "delete a user");
  sub->add_option("user", del->user_id, "user id")->required();
  OnRun(sub, ctx, [&ctx, del](Session& s) {
    authpb::DeleteUserRequest req;
    req.set_user_id(del->user_id);
    GPUAAS_ASSIGN_OR_RETURN(authpb::DeleteUserResponse resp, s.Call(&AuthClient::DeleteUser, req));
    return ctx.Print(resp, [&] { return absl::StrCat("deleted user ", del->user_id, "\n"); });
  });
}

}  // namespace gpuaas::ctl

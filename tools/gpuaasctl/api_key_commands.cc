// api-keys list|create|revoke|exchange
#include <memory>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/roles.h"
#include "tools/gpuaasctl/secret_input.h"

namespace gpuaas::ctl {
namespace {

struct ApiKeyFlags {
  std::string api_key_id;
  std::string name;
  std::string role;
  std::string node_id;
  std::string ttl;
  std::string request_id;
  std::string secret;
  std::string secret_file;
  bool no_save = false;
  PageFlags page;
};

std::string KeyTable(const google::protobuf::RepeatedPtrField<authpb::ApiKey>& keys) {
  Table t({"API KEY ID", "NAME", "TENANT", "ROLE", "NODE", "CREATED", "EXPIRES", "REVOKED"});
  for (const auto& k : keys) {
    t.AddRow({k.api_key_id(), k.name(), k.tenant_id(), RoleDisplayName(k.role()), k.node_id(),
              FormatTimestamp(k.create_time()),
              k.has_expire_time() ? FormatTimestamp(k.expire_time()) : "never",
              k.revoked() ? "yes" : "no"});
  }
  return t.Render();
}

std::string OneKey(const authpb::ApiKey& key) {
  google::protobuf::RepeatedPtrField<authpb::ApiKey> one;
  *one.Add() = key;
  return KeyTable(one);
}

absl::Status Create(Context& ctx, Session& s, const ApiKeyFlags& f) {
  authpb::CreateApiKeyRequest req;
  req.set_name(f.name);
  common::v1::Role role = common::v1::ROLE_UNSPECIFIED;
  if (absl::Status st = ParseRoleInto(f.role, role); !st.ok()) {
    return st;
  }
  req.set_role(role);
  req.set_node_id(f.node_id);
  if (!f.ttl.empty()) {
    absl::Duration ttl;
    if (!absl::ParseDuration(f.ttl, &ttl) || ttl <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--ttl: want a positive duration like 720h, got \"", f.ttl, "\""));
    }
    // The server keeps whole seconds; round up so a sub-second --ttl never means "forever" (0).
    req.mutable_ttl()->set_seconds(absl::ToInt64Seconds(absl::Ceil(ttl, absl::Seconds(1))));
  }
  req.set_request_id(RequestIdOrNew(f.request_id));
  GPUAAS_ASSIGN_OR_RETURN(authpb::CreateApiKeyResponse resp,
                          s.Call(&AuthClient::CreateApiKey, req));
  return ctx.Print(resp, [&] {
    return absl::StrCat(OneKey(resp.api_key()),
                        "\nsecret (shown once, store it now): ", resp.secret(), "\n");
  });
}

absl::Status Exchange(Context& ctx, Session& s, const ApiKeyFlags& f) {
  absl::StatusOr<std::string> secret = ReadSecret("API key secret", f.secret, f.secret_file);
  if (!secret.ok()) {
    return secret.status();
  }
  authpb::ExchangeApiKeyRequest req;
  req.set_secret(*secret);
  GPUAAS_ASSIGN_OR_RETURN(authpb::ExchangeApiKeyResponse resp,
                          s.CallPublic(&AuthClient::ExchangeApiKey, req));
  if (f.no_save) {
    // The caller asked for the token itself (e.g. to export GPUAAS_TOKEN), so print it.
    return ctx.Print(resp, [&] { return resp.access_token() + "\n"; });
  }
  GPUAAS_RETURN_IF_ERROR(s.SaveApiKeyExchange(resp));
  resp.clear_access_token();
  return ctx.Print(resp, [&] {
    Fields out;
    out.Add("logged in with api key", "");
    out.Add("tenant", resp.tenant_id());
    out.Add("role", RoleDisplayName(resp.role()));
    out.Add("expires", FormatTimestamp(resp.expire_time()));
    return out.Render();
  });
}

}  // namespace

void AddApiKeyCommands(CLI::App& root, Context& ctx) {
  CLI::App* group = root.add_subcommand("api-keys", "manage API keys")->require_subcommand(1);

  auto list = std::make_shared<ApiKeyFlags>();
  CLI::App* sub = group->add_subcommand("list", "list API keys");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    authpb::ListApiKeysResponse resp;
    GPUAAS_RETURN_IF_ERROR(
        ListPages(s, &AuthClient::ListApiKeys, authpb::ListApiKeysRequest(), list->page, resp));
    return ctx.Print(resp, [&] { return KeyTable(resp.api_keys()); });
  });

  auto create = std::make_shared<ApiKeyFlags>();
  sub = group->add_subcommand("create", "create an API key for the session's tenant");
  sub->add_option("name", create->name, "a name to recognise the key by")->required();
  AddRoleOption(sub, "--role", create->role, "role (default: yours; never above it)");
  sub->add_option("--node", create->node_id,
                  "the node a node-agent key acts for (required for --role node-agent)");
  sub->add_option("--ttl", create->ttl, "lifetime, e.g. 720h (default: never expires)");
  sub->add_option("--request-id", create->request_id, "idempotency key (default: random)");
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto revoke = std::make_shared<ApiKeyFlags>();
  sub = group->add_subcommand("revoke", "revoke an API key");
  sub->add_option("api-key", revoke->api_key_id, "API key id")->required();
  OnRun(sub, ctx, [&ctx, revoke](Session& s) {
    authpb::RevokeApiKeyRequest req;
    req.set_api_key_id(revoke->api_key_id);
    GPUAAS_ASSIGN_OR_RETURN(authpb::ApiKey resp, s.Call(&AuthClient::RevokeApiKey, req));
    return ctx.Print(resp, [&] { return OneKey(resp); });
  });

  auto exchange = std::make_shared<ApiKeyFlags>();
  sub = group->add_subcommand(
      "exchange", "trade an API key secret for an access token and use it as the session");
  auto* secret = sub->add_option("--secret", exchange->secret, "secret (visible in ps)");
  sub->add_option("--secret-file", exchange->secret_file, "read the secret from this file")
      ->excludes(secret);
  sub->add_flag("--no-save", exchange->no_save,
                "print the access token instead of storing it as the session");
  OnRun(sub, ctx, [&ctx, exchange](Session& s) { return Exchange(ctx, s, *exchange); });
}

}  // namespace gpuaas::ctl

// accessors create|list|delete
#include <filesystem>
#include <memory>

#include "absl/strings/str_cat.h"
#include "libs/client/settings.h"
#include "libs/common/proto_time.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/storage_tables.h"

namespace gpuaas::ctl {
namespace {

// Where the dev stack serves S3 unless it says otherwise (GPUAAS_S3_ENDPOINT in stack.env).
constexpr std::string_view kDefaultS3Endpoint = "http://127.0.0.1:9000";

struct AccessorFlags {
  std::string storage_id;
  std::string access_key_id;
  std::string ttl;
  bool read_only = false;
  std::string description;
  std::string request_id;
  std::string s3_endpoint;
  PageFlags page;
};

// --s3-endpoint, $GPUAAS_S3_ENDPOINT, .gpuaas/stack.env, the dev stack's default: the order of
// every other address (libs/client/settings.h).
absl::StatusOr<std::string> S3Endpoint(const std::string& flag) {
  std::error_code ec;
  client::Settings settings(client::ProcessEnv(), std::filesystem::current_path(ec));
  return settings.Get(flag, "GPUAAS_S3_ENDPOINT", kDefaultS3Endpoint);
}

absl::Status Create(Context& ctx, Session& s, const AccessorFlags& f) {
  storagepb::CreateAccessorRequest req;
  req.set_storage_id(f.storage_id);
  if (!f.ttl.empty()) {
    absl::Duration ttl;
    if (!absl::ParseDuration(f.ttl, &ttl) || ttl <= absl::ZeroDuration()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--ttl: want a positive duration like 24h or 90m, got \"", f.ttl, "\""));
    }
    *req.mutable_ttl() = ToProtoDuration(ttl);
  }
  req.set_read_only(f.read_only);
  req.set_description(f.description);
  req.set_request_id(RequestIdOrNew(f.request_id));
  GPUAAS_ASSIGN_OR_RETURN(std::string endpoint, S3Endpoint(f.s3_endpoint));
  GPUAAS_ASSIGN_OR_RETURN(storagepb::CreateAccessorResponse resp,
                          s.Call(&StorageClient::CreateAccessor, req));
  return ctx.Print(resp, [&] { return AccessorSetupText(resp, endpoint); });
}

}  // namespace

void AddAccessorCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("accessors", "manage S3 keys that reach one storage (its accessors)")
          ->require_subcommand(1);

  auto create = std::make_shared<AccessorFlags>();
  CLI::App* sub = group->add_subcommand(
      "create",
      "make an S3 key pair for a storage; prints the secret once, with AWS CLI and "
      "rclone settings");
  sub->add_option("storage", create->storage_id, "storage id (its bucket)")->required();
  sub->add_option("--ttl", create->ttl, "how long the key works, up to 720h (default: 24h)");
  sub->add_flag("--read-only", create->read_only, "the key may list and read, not write");
  sub->add_option("--description", create->description, "free text for people");
  sub->add_option("--request-id", create->request_id,
                  "idempotency key: a retry returns the accessor without its secret");
  sub->add_option("--s3-endpoint", create->s3_endpoint,
                  "the S3 endpoint to print in the settings (default: $GPUAAS_S3_ENDPOINT, "
                  ".gpuaas/stack.env, http://127.0.0.1:9000)");
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto list = std::make_shared<AccessorFlags>();
  sub = group->add_subcommand("list", "list a storage's accessors (never their secrets)");
  sub->add_option("storage", list->storage_id, "storage id")->required();
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    storagepb::ListAccessorsRequest req;
    req.set_storage_id(list->storage_id);
    storagepb::ListAccessorsResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &StorageClient::ListAccessors, req, list->page, resp));
    return ctx.Print(resp, [&] { return AccessorTable(resp.accessors()); });
  });

  auto del = std::make_shared<AccessorFlags>();
  sub = group->add_subcommand("delete", "revoke an accessor at once");
  sub->add_option("access-key-id", del->access_key_id, "the accessor's access key id")->required();
  OnRun(sub, ctx, [&ctx, del](Session& s) {
    storagepb::DeleteAccessorRequest req;
    req.set_access_key_id(del->access_key_id);
    GPUAAS_ASSIGN_OR_RETURN(storagepb::DeleteAccessorResponse resp,
                            s.Call(&StorageClient::DeleteAccessor, req));
    return ctx.Print(resp,
                     [&] { return absl::StrCat("deleted accessor ", del->access_key_id, "\n"); });
  });
}

}  // namespace gpuaas::ctl

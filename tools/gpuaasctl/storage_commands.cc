// storages list|get|create|resize|rename|delete (and snapshots: snapshot_commands.cc)
#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/storage_tables.h"

namespace gpuaas::ctl {
namespace {

struct StorageFlags {
  std::string storage_id;
  std::string spec_name;
  std::string name;
  std::string tenant_id;
  std::string request_id;
  std::string state;
  std::string from_snapshot;  // STORAGE/SNAPSHOT
  PageFlags page;
};

absl::Status PrintStorage(Context& ctx, const storagepb::Storage& storage) {
  return ctx.Print(storage, [&] { return StorageDetail(storage); });
}

absl::Status Create(Context& ctx, Session& s, const StorageFlags& f) {
  storagepb::CreateStorageRequest req;
  req.set_storage_id(f.storage_id);
  req.set_spec_name(f.spec_name);
  req.set_name(f.name);
  req.set_tenant_id(f.tenant_id);
  if (!f.from_snapshot.empty()) {
    GPUAAS_ASSIGN_OR_RETURN(*req.mutable_source_snapshot(),
                            ParseSnapshotRef("--from-snapshot", f.from_snapshot));
  }
  // Without an id of its own the storage needs a request id to be retried safely.
  if (f.storage_id.empty()) req.set_request_id(RequestIdOrNew(f.request_id));
  GPUAAS_ASSIGN_OR_RETURN(storagepb::Storage resp, s.Call(&StorageClient::CreateStorage, req));
  return PrintStorage(ctx, resp);
}

absl::Status List(Context& ctx, Session& s, const StorageFlags& f) {
  storagepb::ListStoragesRequest req;
  req.set_tenant_id(f.tenant_id);
  req.set_spec_name(f.spec_name);
  req.set_name(f.name);
  if (!f.state.empty()) {
    GPUAAS_ASSIGN_OR_RETURN(storagepb::StorageState state, ParseStorageState("--state", f.state));
    req.set_state(state);
  }
  storagepb::ListStoragesResponse resp;
  GPUAAS_RETURN_IF_ERROR(ListPages(s, &StorageClient::ListStorages, req, f.page, resp));
  return ctx.Print(resp, [&] { return StorageTable(resp.storages()); });
}

absl::Status Update(Context& ctx, Session& s, const StorageFlags& f, std::string_view path) {
  storagepb::UpdateStorageRequest req;
  req.mutable_storage()->set_storage_id(f.storage_id);
  req.mutable_storage()->set_spec_name(f.spec_name);
  req.mutable_storage()->set_name(f.name);
  req.mutable_update_mask()->add_paths(std::string(path));
  GPUAAS_ASSIGN_OR_RETURN(storagepb::Storage resp, s.Call(&StorageClient::UpdateStorage, req));
  return PrintStorage(ctx, resp);
}

}  // namespace

void AddStorageCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("storages", "manage storages (volumes kept across instances)")
          ->require_subcommand(1);

  auto list = std::make_shared<StorageFlags>();
  CLI::App* sub = group->add_subcommand("list", "list storages");
  sub->add_option("--spec", list->spec_name, "only storages of this spec");
  sub->add_option("--state", list->state, "only storages in this state: creating|ready|deleting");
  sub->add_option("--name", list->name, "only storages with exactly this name");
  sub->add_option("--tenant", list->tenant_id, "only this tenant's (global roles; default: all)");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) { return List(ctx, s, *list); });

  auto get = std::make_shared<StorageFlags>();
  sub = group->add_subcommand("get", "show one storage with its usage and attachments");
  sub->add_option("storage", get->storage_id, "storage id")->required();
  OnRun(sub, ctx, [&ctx, get](Session& s) {
    storagepb::GetStorageRequest req;
    req.set_storage_id(get->storage_id);
    GPUAAS_ASSIGN_OR_RETURN(storagepb::Storage resp, s.Call(&StorageClient::GetStorage, req));
    return PrintStorage(ctx, resp);
  });

  auto create = std::make_shared<StorageFlags>();
  sub = group->add_subcommand(
      "create", "create a storage of a spec (the same id and request again is a no-op)");
  sub->add_option("storage", create->storage_id,
                  "storage id, also its S3 bucket name: [a-z0-9-], 3..63 (default: chosen by "
                  "the server)");
  sub->add_option("--spec", create->spec_name, "storage spec")->required();
  sub->add_option("--name", create->name, "free text for people, at most 256 bytes");
  sub->add_option("--tenant", create->tenant_id,
                  "the tenant to create it in (global roles; default: the login's tenant)");
  sub->add_option("--request-id", create->request_id,
                  "idempotency key when no storage id is given (default: random)");
  sub->add_option("--from-snapshot", create->from_snapshot,
                  "STORAGE/SNAPSHOT: start with that snapshot's data (restore) instead of empty");
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto resize = std::make_shared<StorageFlags>();
  sub = group->add_subcommand("resize",
                              "move a storage to a larger spec (storages grow, never shrink)");
  sub->add_option("storage", resize->storage_id, "storage id")->required();
  sub->add_option("--spec", resize->spec_name, "the larger spec")->required();
  OnRun(sub, ctx, [&ctx, resize](Session& s) { return Update(ctx, s, *resize, "spec_name"); });

  auto rename = std::make_shared<StorageFlags>();
  sub = group->add_subcommand("rename", "change a storage's name");
  sub->add_option("storage", rename->storage_id, "storage id")->required();
  sub->add_option("--name", rename->name, "the new name")->required();
  OnRun(sub, ctx, [&ctx, rename](Session& s) { return Update(ctx, s, *rename, "name"); });

  auto del = std::make_shared<StorageFlags>();
  sub = group->add_subcommand("delete", "delete a storage and everything in it (detach it first)");
  sub->add_option("storage", del->storage_id, "storage id")->required();
  OnRun(sub, ctx, [&ctx, del](Session& s) {
    storagepb::DeleteStorageRequest req;
    req.set_storage_id(del->storage_id);
    GPUAAS_ASSIGN_OR_RETURN(storagepb::DeleteStorageResponse resp,
                            s.Call(&StorageClient::DeleteStorage, req));
    return ctx.Print(resp, [&] { return absl::StrCat("deleted storage ", del->storage_id, "\n"); });
  });

  AddSnapshotCommands(*group, ctx);
}

}  // namespace gpuaas::ctl

// storages snapshots create|list|delete
#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/storage_tables.h"

namespace gpuaas::ctl {
namespace {

struct SnapshotFlags {
  std::string storage_id;
  std::string snapshot_id;
  PageFlags page;
};

}  // namespace

void AddSnapshotCommands(CLI::App& storages, Context& ctx) {
  CLI::App* group =
      storages
          .add_subcommand("snapshots",
                          "manage a storage's snapshots (storages of the ceph backend); restore "
                          "one with `storages create NEW --from-snapshot STORAGE/SNAPSHOT`")
          ->require_subcommand(1);

  auto create = std::make_shared<SnapshotFlags>();
  CLI::App* sub = group->add_subcommand(
      "create", "take a snapshot of what a storage holds now (the same id again is a no-op)");
  sub->add_option("storage", create->storage_id, "storage id")->required();
  sub->add_option("snapshot", create->snapshot_id,
                  "snapshot id: [a-z0-9-], 3..63, starting with a letter")
      ->required();
  OnRun(sub, ctx, [&ctx, create](Session& s) {
    storagepb::CreateSnapshotRequest req;
    req.set_storage_id(create->storage_id);
    req.set_snapshot_id(create->snapshot_id);
    GPUAAS_ASSIGN_OR_RETURN(storagepb::Snapshot resp, s.Call(&StorageClient::CreateSnapshot, req));
    return ctx.Print(resp, [&] {
      google::protobuf::RepeatedPtrField<storagepb::Snapshot> one;
      *one.Add() = resp;
      return SnapshotTable(one);
    });
  });

  auto list = std::make_shared<SnapshotFlags>();
  sub = group->add_subcommand("list", "list a storage's snapshots");
  sub->add_option("storage", list->storage_id, "storage id")->required();
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    storagepb::ListSnapshotsRequest req;
    req.set_storage_id(list->storage_id);
    storagepb::ListSnapshotsResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &StorageClient::ListSnapshots, req, list->page, resp));
    return ctx.Print(resp, [&] { return SnapshotTable(resp.snapshots()); });
  });

  auto del = std::make_shared<SnapshotFlags>();
  sub = group->add_subcommand("delete",
                              "delete a snapshot (storages restored from it keep their data)");
  sub->add_option("storage", del->storage_id, "storage id")->required();
  sub->add_option("snapshot", del->snapshot_id, "snapshot id")->required();
  OnRun(sub, ctx, [&ctx, del](Session& s) {
    storagepb::DeleteSnapshotRequest req;
    req.set_storage_id(del->storage_id);
    req.set_snapshot_id(del->snapshot_id);
    GPUAAS_ASSIGN_OR_RETURN(storagepb::DeleteSnapshotResponse resp,
                            s.Call(&StorageClient::DeleteSnapshot, req));
    return ctx.Print(resp, [&] {
      return absl::StrCat("deleted snapshot ", del->snapshot_id, " of storage ", del->storage_id,
                          "\n");
    });
  });
}

}  // namespace gpuaas::ctl

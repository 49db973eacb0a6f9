// storage-specs list|get|create|update|delete
#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/price.h"
#include "tools/gpuaasctl/storage_tables.h"

namespace gpuaas::ctl {
namespace {

struct StorageSpecFlags {
  std::string spec_name;
  std::string size;
  int64_t max_files = 0;
  std::string price;
  std::string backend_class = "local";
  std::string description;
  PageFlags page;
  // Which optional flags were given, for update masks.
  CLI::Option* price_opt = nullptr;
  CLI::Option* description_opt = nullptr;
};

constexpr std::string_view kPriceFlag = "--price-per-gb-hour";

absl::Status PrintSpec(Context& ctx, const storagepb::StorageSpec& spec) {
  return ctx.Print(spec, [&] {
    google::protobuf::RepeatedPtrField<storagepb::StorageSpec> one;
    *one.Add() = spec;
    return StorageSpecTable(one);
  });
}

absl::Status Create(Context& ctx, Session& s, const StorageSpecFlags& f) {
  storagepb::CreateStorageSpecRequest req;
  storagepb::StorageSpec& spec = *req.mutable_spec();
  spec.set_spec_name(f.spec_name);
  spec.set_size(f.size);
  spec.set_max_files(f.max_files);
  GPUAAS_ASSIGN_OR_RETURN(int64_t micros, ParsePriceMicros(kPriceFlag, f.price));
  spec.set_price_per_gb_hour_micros(micros);
  spec.set_backend_class(f.backend_class);
  spec.set_description(f.description);
  // CreateStorageSpec is idempotent by name: a retry of the same spec returns the first answer.
  GPUAAS_ASSIGN_OR_RETURN(storagepb::StorageSpec resp,
                          s.Call(&StorageClient::CreateStorageSpec, req));
  return PrintSpec(ctx, resp);
}

absl::Status Update(Context& ctx, Session& s, const StorageSpecFlags& f) {
  storagepb::UpdateStorageSpecRequest req;
  storagepb::StorageSpec& spec = *req.mutable_spec();
  spec.set_spec_name(f.spec_name);
  auto* mask = req.mutable_update_mask();
  if (f.price_opt->count() > 0) {
    GPUAAS_ASSIGN_OR_RETURN(int64_t micros, ParsePriceMicros(kPriceFlag, f.price));
    spec.set_price_per_gb_hour_micros(micros);
    mask->add_paths("price_per_gb_hour_micros");
  }
  if (f.description_opt->count() > 0) {
    spec.set_description(f.description);
    mask->add_paths("description");
  }
  if (mask->paths_size() == 0) {
    // An empty mask would mean "both" to the server, which is never what was meant here.
    return absl::InvalidArgumentError(
        "nothing to update: give --price-per-gb-hour or --description");
  }
  GPUAAS_ASSIGN_OR_RETURN(storagepb::StorageSpec resp,
                          s.Call(&StorageClient::UpdateStorageSpec, req));
  return PrintSpec(ctx, resp);
}

}  // namespace

void AddStorageSpecCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("storage-specs", "manage storage specs (the sizes storages come in)")
          ->require_subcommand(1);

  auto list = std::make_shared<StorageSpecFlags>();
  CLI::App* sub = group->add_subcommand("list", "list storage specs");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    storagepb::ListStorageSpecsResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &StorageClient::ListStorageSpecs,
                                     storagepb::ListStorageSpecsRequest(), list->page, resp));
    return ctx.Print(resp, [&] { return StorageSpecTable(resp.specs()); });
  });

  auto get = std::make_shared<StorageSpecFlags>();
  sub = group->add_subcommand("get", "show one storage spec");
  sub->add_option("spec", get->spec_name, "spec name")->required();
  OnRun(sub, ctx, [&ctx, get](Session& s) {
    storagepb::GetStorageSpecRequest req;
    req.set_spec_name(get->spec_name);
    GPUAAS_ASSIGN_OR_RETURN(storagepb::StorageSpec resp,
                            s.Call(&StorageClient::GetStorageSpec, req));
    return PrintSpec(ctx, resp);
  });

  auto create = std::make_shared<StorageSpecFlags>();
  sub = group->add_subcommand(
      "create", "define a storage spec (platform admin; the same spec again is a no-op)");
  sub->add_option("spec", create->spec_name, "spec name: [a-z0-9.-], 3..63, e.g. ssd-100g")
      ->required();
  sub->add_option("--size", create->size, "size as a Kubernetes quantity: 100Gi, 1Ti")->required();
  sub->add_option("--max-files", create->max_files, "most files a storage may hold")
      ->required()
      ->check(CLI::PositiveNumber);
  sub->add_option(std::string(kPriceFlag), create->price,
                  "price per GB of size per hour as a decimal: 0.00005")
      ->required();
  sub->add_option("--backend", create->backend_class, "where the bytes live")
      ->capture_default_str();
  sub->add_option("--description", create->description, "free text for people, at most 256 bytes");
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto update = std::make_shared<StorageSpecFlags>();
  sub = group->add_subcommand(
      "update", "change a storage spec's price or description (only the flags given)");
  sub->add_option("spec", update->spec_name, "spec name")->required();
  update->price_opt = sub->add_option(std::string(kPriceFlag), update->price,
                                      "price per GB of size per hour as a decimal");
  update->description_opt =
      sub->add_option("--description", update->description, "free text for people");
  OnRun(sub, ctx, [&ctx, update](Session& s) { return Update(ctx, s, *update); });

  auto del = std::make_shared<StorageSpecFlags>();
  sub = group->add_subcommand("delete", "delete a storage spec no storage uses");
  sub->add_option("spec", del->spec_name, "spec name")->required();
  OnRun(sub, ctx, [&ctx, del](Session& s) {
    storagepb::DeleteStorageSpecRequest req;
    req.set_spec_name(del->spec_name);
    GPUAAS_ASSIGN_OR_RETURN(storagepb::DeleteStorageSpecResponse resp,
                            s.Call(&StorageClient::DeleteStorageSpec, req));
    return ctx.Print(resp,
                     [&] { return absl::StrCat("deleted storage spec ", del->spec_name, "\n"); });
  });
}

}  // namespace gpuaas::ctl

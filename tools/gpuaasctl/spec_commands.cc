// specs list|get|create|update|delete
#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/price.h"
#include "tools/gpuaasctl/stock_tables.h"

namespace gpuaas::ctl {
namespace {

struct SpecFlags {
  std::string spec_name;
  std::string gpu_type;
  int gpu_num = 1;
  int gpu_share_milli = 0;
  std::string mig_profile;
  std::string cpu;
  std::string memory;
  std::string disk;
  std::string price;
  std::string currency = "USD";
  std::string description;
  bool deprecated = false;
  bool show_deprecated = false;
  PageFlags page;
  // Which optional flags were given, for update masks.
  CLI::Option* price_opt = nullptr;
  CLI::Option* currency_opt = nullptr;
  CLI::Option* description_opt = nullptr;
  CLI::Option* deprecated_opt = nullptr;
};

constexpr std::string_view kPriceFlag = "--price-per-hour";

absl::Status PrintSpec(Context& ctx, const stockpb::Spec& spec) {
  return ctx.Print(spec, [&] { return OneRow(spec, &SpecTable); });
}

absl::Status Create(Context& ctx, Session& s, const SpecFlags& f) {
  stockpb::CreateSpecRequest req;
  stockpb::Spec& spec = *req.mutable_spec();
  spec.set_spec_name(f.spec_name);
  spec.set_gpu_type(f.gpu_type);
  spec.set_gpu_num(f.gpu_num);
  spec.set_gpu_share_milli(f.gpu_share_milli);
  spec.set_mig_profile(f.mig_profile);
  spec.set_cpu(f.cpu);
  spec.set_memory(f.memory);
  spec.set_disk(f.disk);
  GPUAAS_ASSIGN_OR_RETURN(int64_t micros, ParsePriceMicros(kPriceFlag, f.price));
  spec.mutable_price()->set_micros_per_hour(micros);
  spec.mutable_price()->set_currency(f.currency);
  spec.set_description(f.description);
  // CreateSpec is idempotent by name: a retry of the same spec returns the first answer.
  GPUAAS_ASSIGN_OR_RETURN(stockpb::Spec resp, s.Call(&StockClient::CreateSpec, req));
  return PrintSpec(ctx, resp);
}

absl::Status Update(Context& ctx, Session& s, const SpecFlags& f) {
  stockpb::UpdateSpecRequest req;
  stockpb::Spec& spec = *req.mutable_spec();
  spec.set_spec_name(f.spec_name);
  auto* mask = req.mutable_update_mask();
  if (f.price_opt->count() > 0) {
    GPUAAS_ASSIGN_OR_RETURN(int64_t micros, ParsePriceMicros(kPriceFlag, f.price));
    spec.mutable_price()->set_micros_per_hour(micros);
    std::string currency = f.currency;
    if (f.currency_opt->count() == 0) {
      // The price is written whole (amount and currency): keep the spec's currency.
      stockpb::GetSpecRequest get;
      get.set_spec_name(f.spec_name);
      GPUAAS_ASSIGN_OR_RETURN(stockpb::Spec current, s.Call(&StockClient::GetSpec, get));
      currency = current.price().currency();
    }
    spec.mutable_price()->set_currency(currency);
    mask->add_paths("price");
  } else if (f.currency_opt->count() > 0) {
    return absl::InvalidArgumentError("--currency: give it with --price-per-hour");
  }
  if (f.description_opt->count() > 0) {
    spec.set_description(f.description);
    mask->add_paths("description");
  }
  if (f.deprecated_opt->count() > 0) {
    spec.set_deprecated(f.deprecated);
    mask->add_paths("deprecated");
  }
  if (mask->paths_size() == 0) {
    // An empty mask would mean "all three" to the server, which is never what was meant here.
    return absl::InvalidArgumentError(
        "nothing to update: give --price-per-hour, --description or --deprecated");
  }
  GPUAAS_ASSIGN_OR_RETURN(stockpb::Spec resp, s.Call(&StockClient::UpdateSpec, req));
  return PrintSpec(ctx, resp);
}

void AddCreateFlags(CLI::App* sub, SpecFlags& f) {
  sub->add_option("spec", f.spec_name, "spec name: [a-z0-9.-], 3..63, e.g. a100.1x")->required();
  sub->add_option("--gpu-type", f.gpu_type, "GPU model, e.g. A100-80GB, H100-80GB, T4")->required();
  sub->add_option("--gpu-num", f.gpu_num, "GPUs per instance")->capture_default_str();
  auto* share = sub->add_option("--gpu-share-milli", f.gpu_share_milli,
                                "a time-sliced share of one GPU in thousandths (1..999)");
  sub->add_option("--mig-profile", f.mig_profile, "a MIG profile of the GPU, e.g. 3g.40gb")
      ->excludes(share);
  sub->add_option("--cpu", f.cpu, "CPU as a Kubernetes quantity: 8, 500m")->required();
  sub->add_option("--memory", f.memory, "memory as a Kubernetes quantity: 32Gi")->required();
  sub->add_option("--disk", f.disk, "local disk as a Kubernetes quantity: 200Gi")->required();
  sub->add_option(std::string(kPriceFlag), f.price, "price per hour as a decimal: 1.20")
      ->required();
  sub->add_option("--currency", f.currency, "ISO 4217 currency code")->capture_default_str();
  sub->add_option("--description", f.description, "free text for people, at most 256 bytes");
}

}  // namespace

void AddSpecCommands(CLI::App& root, Context& ctx) {
  CLI::App* group = root.add_subcommand("specs", "manage GPU specs")->require_subcommand(1);

  auto list = std::make_shared<SpecFlags>();
  CLI::App* sub = group->add_subcommand("list", "list specs");
  sub->add_flag("--show-deprecated", list->show_deprecated, "include deprecated specs");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    stockpb::ListSpecsRequest req;
    req.set_show_deprecated(list->show_deprecated);
    stockpb::ListSpecsResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &StockClient::ListSpecs, req, list->page, resp));
    return ctx.Print(resp, [&] { return SpecTable(resp.specs()); });
  });

  auto get = std::make_shared<SpecFlags>();
  sub = group->add_subcommand("get", "show one spec");
  sub->add_option("spec", get->spec_name, "spec name")->required();
  OnRun(sub, ctx, [&ctx, get](Session& s) {
    stockpb::GetSpecRequest req;
    req.set_spec_name(get->spec_name);
    GPUAAS_ASSIGN_OR_RETURN(stockpb::Spec resp, s.Call(&StockClient::GetSpec, req));
    return PrintSpec(ctx, resp);
  });

  auto create = std::make_shared<SpecFlags>();
  sub = group->add_subcommand("create",
                              "define a GPU spec (platform admin; the same spec again is a no-op)");
  AddCreateFlags(sub, *create);
  OnRun(sub, ctx, [&ctx, create](Session& s) { return Create(ctx, s, *create); });

  auto update = std::make_shared<SpecFlags>();
  sub = group->add_subcommand(
      "update", "change a spec's price, description or deprecation (only the flags given)");
  sub->add_option("spec", update->spec_name, "spec name")->required();
  update->price_opt =
      sub->add_option(std::string(kPriceFlag), update->price, "price per hour as a decimal: 1.20");
  update->currency_opt = sub->add_option("--currency", update->currency,
                                         "ISO 4217 currency code (default: the spec's own)");
  update->description_opt =
      sub->add_option("--description", update->description, "free text for people");
  update->deprecated_opt = sub->add_option("--deprecated", update->deprecated,
                                           "true: no new stocks of the spec; false: undo");
  OnRun(sub, ctx, [&ctx, update](Session& s) { return Update(ctx, s, *update); });

  auto del = std::make_shared<SpecFlags>();
  sub = group->add_subcommand("delete", "delete a spec (delete its stocks first)");
  sub->add_option("spec", del->spec_name, "spec name")->required();
  OnRun(sub, ctx, [&ctx, del](Session& s) {
    stockpb::DeleteSpecRequest req;
    req.set_spec_name(del->spec_name);
    GPUAAS_ASSIGN_OR_RETURN(stockpb::DeleteSpecResponse resp,
                            s.Call(&StockClient::DeleteSpec, req));
    return ctx.Print(resp, [&] { return absl::StrCat("deleted spec ", del->spec_name, "\n"); });
  });
}

}  // namespace gpuaas::ctl

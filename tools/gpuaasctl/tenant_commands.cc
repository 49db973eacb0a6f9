// tenants list|get|create|update|delete
#include <memory>

#include "absl/strings/str_cat.h"
#include "libs/common/quantity.h"
#include "tools/gpuaasctl/commands.h"

namespace gpuaas::ctl {
namespace {

struct TenantFlags {
  std::string tenant_id;
  std::string display_name;
  int64_t max_gpus = 0;
  int64_t max_instances = 0;
  int64_t max_storage_bytes = 0;
  std::string request_id;
  PageFlags page;
  // Which optional flags were given, for update masks.
  CLI::Option* display_name_opt = nullptr;
  CLI::Option* max_gpus_opt = nullptr;
  CLI::Option* max_instances_opt = nullptr;
  CLI::Option* max_storage_opt = nullptr;
};

std::string TenantTable(const google::protobuf::RepeatedPtrField<authpb::Tenant>& tenants) {
  Table t({"TENANT", "DISPLAY NAME", "MAX GPUS", "MAX INSTANCES", "MAX STORAGE BYTES", "CREATED"});
  for (const auto& x : tenants) {
    t.AddRow({x.tenant_id(), x.display_name(), absl::StrCat(x.quota().max_gpus()),
              absl::StrCat(x.quota().max_instances()), FormatBytes(x.quota().max_storage_bytes()),
              FormatTimestamp(x.create_time())});
  }
  return t.Render();
}

absl::Status PrintTenant(Context& ctx, const authpb::Tenant& tenant) {
  return ctx.Print(tenant, [&] {
    google::protobuf::RepeatedPtrField<authpb::Tenant> one;
    *one.Add() = tenant;
    return TenantTable(one);
  });
}

void AddQuotaFlags(CLI::App* sub, TenantFlags& f) {
  f.display_name_opt = sub->add_option("--display-name", f.display_name, "human-readable name");
  f.max_gpus_opt =
      sub->add_option("--max-gpus", f.max_gpus, "GPU quota")->check(CLI::NonNegativeNumber);
  f.max_instances_opt = sub->add_option("--max-instances", f.max_instances, "instance quota")
                            ->check(CLI::NonNegativeNumber);
  // A quantity (1Ti, 500Gi) or a byte count.
  f.max_storage_opt =
      sub->add_option("--max-storage-bytes", f.max_storage_bytes,
                      "storage quota: bytes the tenant's storages may reserve, e.g. 1Ti")
          ->transform([](std::string text) -> std::string {
            if (text == "0") return text;  // allows none; ParseBytes wants a size
            absl::StatusOr<int64_t> bytes = ParseBytes("value", text);
            if (!bytes.ok()) throw CLI::ValidationError(std::string(bytes.status().message()));
            return std::to_string(*bytes);
          })
          ->check(CLI::NonNegativeNumber);
}

void FillTenant(const TenantFlags& f, authpb::Tenant& t) {
  t.set_tenant_id(f.tenant_id);
  t.set_display_name(f.display_name);
  t.mutable_quota()->set_max_gpus(f.max_gpus);
  t.mutable_quota()->set_max_instances(f.max_instances);
  t.mutable_quota()->set_max_storage_bytes(f.max_storage_bytes);
}

absl::Status Update(Context& ctx, Session& s, const TenantFlags& f) {
  authpb::UpdateTenantRequest req;
  FillTenant(f, *req.mutable_tenant());
  auto* mask = req.mutable_update_mask();
  if (f.display_name_opt->count() > 0) {
    mask->add_paths("display_name");
  }
  if (f.max_gpus_opt->count() > 0) {
    mask->add_paths("quota.max_gpus");
  }
  if (f.max_instances_opt->count() > 0) {
    mask->add_paths("quota.max_instances");
  }
  if (f.max_storage_opt->count() > 0) {
    mask->add_paths("quota.max_storage_bytes");
  }
  if (mask->paths_size() == 0) {
    return absl::InvalidArgumentError(
        "nothing to update: give --display-name, --max-gpus, --max-instances or "
        "--max-storage-bytes");
  }
  GPUAAS_ASSIGN_OR_RETURN(authpb::Tenant resp, s.Call(&AuthClient::UpdateTenant, req));
  return PrintTenant(ctx, resp);
}

}  // namespace

void AddTenantCommands(CLI::App& root, Context& ctx) {
  CLI::App* group = root.add_subcommand("tenants", "manage tenants")->require_subcommand(1);

  auto list = std::make_shared<TenantFlags>();
  CLI::App* sub = group->add_subcommand("list", "list tenants");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    authpb::ListTenantsResponse resp;
    GPUAAS_RETURN_IF_ERROR(
        ListPages(s, &AuthClient::ListTenants, authpb::ListTenantsRequest(), list->page, resp));
    return ctx.Print(resp, [&] { return TenantTable(resp.tenants()); });
  });

  auto get = std::make_shared<TenantFlags>();
  sub = group->add_subcommand("get", "show one tenant");
  sub->add_option("tenant", get->tenant_id, "tenant id")->required();
  OnRun(sub, ctx, [&ctx, get](Session& s) {
    authpb::GetTenantRequest req;
    req.set_tenant_id(get->tenant_id);
    GPUAAS_ASSIGN_OR_RETURN(authpb::Tenant resp, s.Call(&AuthClient::GetTenant, req));
    return PrintTenant(ctx, resp);
  });

  auto create = std::make_shared<TenantFlags>();
  sub = group->add_subcommand("create", "create a tenant (platform admin)");
  sub->add_option("tenant", create->tenant_id, "tenant id: [a-z0-9-], 3..63")->required();
  AddQuotaFlags(sub, *create);
  sub->add_option("--request-id", create->request_id, "idempotency key (default: random)");
  OnRun(sub, ctx, [&ctx, create](Session& s) {
    authpb::CreateTenantRequest req;
    FillTenant(*create, *req.mutable_tenant());
    req.set_request_id(RequestIdOrNew(create->request_id));
    GPUAAS_ASSIGN_OR_RETURN(authpb::Tenant resp, s.Call(&AuthClient::CreateTenant, req));
    return PrintTenant(ctx, resp);
  });

  auto update = std::make_shared<TenantFlags>();
  sub = group->add_subcommand("update", "change a tenant's name or quota (only the flags given)");
  sub->add_option("tenant", update->tenant_id, "tenant id")->required();
  AddQuotaFlags(sub, *update);
  OnRun(sub, ctx, [&ctx, update](Session& s) { return Update(ctx, s, *update); });

  auto del = std::make_shared<TenantFlags>();
  sub = group->add_subcommand("delete", "delete a tenant");
  sub->add_option("tenant", del->tenant_id, "tenant id")->required();
  OnRun(sub, ctx, [&ctx, del](Session& s) {
    authpb::DeleteTenantRequest req;
    req.set_tenant_id(del->tenant_id);
    GPUAAS_ASSIGN_OR_RETURN(authpb::DeleteTenantResponse resp,
                            s.Call(&AuthClient::DeleteTenant, req));
    return ctx.Print(resp, [&] { return absl::StrCat("deleted tenant ", del->tenant_id, "\n"); });
  });
}

}  // namespace gpuaas::ctl

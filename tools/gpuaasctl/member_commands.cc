// members list|add|update|remove: who belongs to a tenant, and with which role.
#include <memory>

#include "absl/strings/str_cat.h"
#include "tools/gpuaasctl/commands.h"
#include "tools/gpuaasctl/roles.h"

namespace gpuaas::ctl {
namespace {

struct MemberFlags {
  std::string tenant;
  std::string user_id;
  std::string role;
  PageFlags page;
};

// --tenant, else the tenant the current token acts for: a tenant admin manages its own tenant
// without repeating it. Error: INVALID_ARGUMENT when neither names one.
absl::StatusOr<std::string> TenantOf(Session& s, const std::string& flag) {
  if (!flag.empty()) {
    return flag;
  }
  absl::StatusOr<std::optional<StoredToken>> stored = s.StoredSession();
  if (stored.ok() && stored->has_value() && !(*stored)->tenant_id.empty()) {
    return (*stored)->tenant_id;
  }
  return absl::InvalidArgumentError("--tenant is required (the session has no tenant)");
}

std::string MemberTable(const google::protobuf::RepeatedPtrField<authpb::Membership>& members) {
  Table t({"TENANT", "USER ID", "USER NAME", "ROLE", "SINCE"});
  for (const auto& m : members) {
    t.AddRow({m.tenant_id(), m.user_id(), m.user_name(), RoleDisplayName(m.role()),
              FormatTimestamp(m.create_time())});
  }
  return t.Render();
}

absl::Status PrintMember(Context& ctx, const authpb::Membership& m) {
  return ctx.Print(m, [&] {
    google::protobuf::RepeatedPtrField<authpb::Membership> one;
    *one.Add() = m;
    return MemberTable(one);
  });
}

// Shared by add and update, whose requests have the same three fields.
template <class Req>
absl::Status SetMember(Context& ctx, Session& s, Session::Method<Req, authpb::Membership> method,
                       const MemberFlags& f) {
  absl::StatusOr<std::string> tenant = TenantOf(s, f.tenant);
  if (!tenant.ok()) {
    return tenant.status();
  }
  Req req;
  req.set_tenant_id(*tenant);
  req.set_user_id(f.user_id);
  common::v1::Role role = common::v1::ROLE_UNSPECIFIED;
  if (absl::Status st = ParseRoleInto(f.role, role); !st.ok()) {
    return st;
  }
  req.set_role(role);
  GPUAAS_ASSIGN_OR_RETURN(authpb::Membership resp, s.Call(method, req));
  return PrintMember(ctx, resp);
}

}  // namespace

void AddMemberCommands(CLI::App& root, Context& ctx) {
  CLI::App* group =
      root.add_subcommand("members", "manage tenant memberships")->require_subcommand(1);

  auto list = std::make_shared<MemberFlags>();
  CLI::App* sub = group->add_subcommand("list", "list a tenant's members");
  sub->add_option("-t,--tenant", list->tenant, "tenant (default: the session's)");
  AddPageFlags(sub, list->page);
  OnRun(sub, ctx, [&ctx, list](Session& s) {
    absl::StatusOr<std::string> tenant = TenantOf(s, list->tenant);
    if (!tenant.ok()) {
      return tenant.status();
    }
    authpb::ListMembersRequest req;
    req.set_tenant_id(*tenant);
    authpb::ListMembersResponse resp;
    GPUAAS_RETURN_IF_ERROR(ListPages(s, &AuthClient::ListMembers, req, list->page, resp));
    return ctx.Print(resp, [&] { return MemberTable(resp.members()); });
  });

  auto add = std::make_shared<MemberFlags>();
  sub = group->add_subcommand("add", "add a user to a tenant");
  sub->add_option("user", add->user_id, "user id")->required();
  sub->add_option("-t,--tenant", add->tenant, "tenant (default: the session's)");
  AddRoleOption(sub, "--role", add->role, "role in the tenant")->required();
  OnRun(sub, ctx, [&ctx, add](Session& s) {
    return SetMember<authpb::AddMemberRequest>(ctx, s, &AuthClient::AddMember, *add);
  });

  auto update = std::make_shared<MemberFlags>();
  sub = group->add_subcommand("update", "change a member's role");
  sub->add_option("user", update->user_id, "user id")->required();
  sub->add_option("-t,--tenant", update->tenant, "tenant (default: the session's)");
  AddRoleOption(sub, "--role", update->role, "new role")->required();
  OnRun(sub, ctx, [&ctx, update](Session& s) {
    return SetMember<authpb::UpdateMemberRequest>(ctx, s, &AuthClient::UpdateMember, *update);
  });

  auto remove = std::make_shared<MemberFlags>();
  sub = group->add_subcommand("remove", "remove a user from a tenant");
  sub->add_option("user", remove->user_id, "user id")->required();
  sub->add_option("-t,--tenant", remove->tenant, "tenant (default: the session's)");
  OnRun(sub, ctx, [&ctx, remove](Session& s) {
    absl::StatusOr<std::string> tenant = TenantOf(s, remove->tenant);
    if (!tenant.ok()) {
      return tenant.status();
    }
    authpb::RemoveMemberRequest req;
    req.set_tenant_id(*tenant);
    req.set_user_id(remove->user_id);
    GPUAAS_ASSIGN_OR_RETURN(authpb::RemoveMemberResponse resp,
                            s.Call(&AuthClient::RemoveMember, req));
    return ctx.Print(
        resp, [&] { return absl::StrCat("removed ", remove->user_id, " from ", *tenant, "\n"); });
  });
}

}  // namespace gpuaas::ctl

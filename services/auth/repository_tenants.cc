// Tenants and memberships.
#include "absl/strings/str_split.h"
#include "libs/common/proto_time.h"
#include "services/auth/repository.h"

namespace gpuaas::auth {
namespace {

// SQL reads best as written.
// clang-format off
#define GPUAAS_TENANT_COLUMNS                                             \
  "tenant_id, display_name, max_gpus, max_instances, max_storage_bytes, " \
  GPUAAS_SQL_MICROS("create_time") ", " GPUAAS_SQL_MICROS("update_time")
// clang-format on

pb::Tenant TenantFromRow(const db::Row& r) {
  pb::Tenant t;
  t.set_tenant_id(r.Get<std::string>(0));
  t.set_display_name(r.Get<std::string>(1));
  t.mutable_quota()->set_max_gpus(r.Get<int64_t>(2));
  t.mutable_quota()->set_max_instances(r.Get<int64_t>(3));
  t.mutable_quota()->set_max_storage_bytes(r.Get<int64_t>(4));
  *t.mutable_create_time() = ToProtoTime(r.GetTime(5));
  *t.mutable_update_time() = ToProtoTime(r.GetTime(6));
  return t;
}

// SQL reads best as written.
// clang-format off
#define GPUAAS_MEMBER_FROM                               \
  "SELECT m.tenant_id, m.user_id, u.user_name, m.role, " \
  GPUAAS_SQL_MICROS("m.create_time")                     \
  " FROM auth.memberships m JOIN auth.users u USING (user_id) "
// clang-format on

pb::Membership MemberFromRow(const db::Row& r) {
  pb::Membership m;
  m.set_tenant_id(r.Get<std::string>(0));
  m.set_user_id(r.Get<std::string>(1));
  m.set_user_name(r.Get<std::string>(2));
  m.set_role(r.GetEnum<common::v1::Role>(3));
  *m.mutable_create_time() = ToProtoTime(r.GetTime(4));
  return m;
}

}  // namespace

void Repository::InsertTenant(db::Tx& tx, const pb::Tenant& t) {
  constexpr std::string_view kInsertTenant =
      "INSERT INTO auth.tenants (tenant_id, display_name, max_gpus, max_instances, "
      "max_storage_bytes) VALUES ($1, $2, $3, $4, $5)";
  tx.Exec(kInsertTenant, t.tenant_id(), t.display_name(), t.quota().max_gpus(),
          t.quota().max_instances(), t.quota().max_storage_bytes());
}

std::optional<pb::Tenant> Repository::GetTenant(db::Tx& tx, const std::string& tenant_id) {
  constexpr std::string_view kGetTenant =
      "SELECT " GPUAAS_TENANT_COLUMNS " FROM auth.tenants WHERE tenant_id = $1";
  std::optional<db::Row> row = tx.Exec(kGetTenant, tenant_id).First();
  if (!row) return std::nullopt;
  return TenantFromRow(*row);
}

std::vector<pb::Tenant> Repository::ListTenants(db::Tx& tx, const PageRequest& page) {
  constexpr std::string_view kListTenants =
      "SELECT " GPUAAS_TENANT_COLUMNS
      " FROM auth.tenants WHERE tenant_id > $1 ORDER BY tenant_id LIMIT $2";
  return tx.Exec(kListTenants, page.after, page.limit).Map(TenantFromRow);
}

bool Repository::UpdateTenant(db::Tx& tx, const pb::Tenant& t) {
  constexpr std::string_view kUpdateTenant =
      "UPDATE auth.tenants SET display_name = $2, max_gpus = $3, max_instances = $4, "
      "max_storage_bytes = $5, update_time = now() WHERE tenant_id = $1";
  return tx.Exec(kUpdateTenant, t.tenant_id(), t.display_name(), t.quota().max_gpus(),
                 t.quota().max_instances(), t.quota().max_storage_bytes())
             .affected_rows() == 1;
}

bool Repository::DeleteTenant(db::Tx& tx, const std::string& tenant_id) {
  constexpr std::string_view kDeleteTenant =
      "WITH gone AS (DELETE FROM auth.tenants WHERE tenant_id = $1 RETURNING tenant_id) "
      "INSERT INTO auth.deleted_tenants (tenant_id) SELECT tenant_id FROM gone";
  return tx.Exec(kDeleteTenant, tenant_id).affected_rows() == 1;
}

bool Repository::TenantIdWasUsed(db::Tx& tx, const std::string& tenant_id) {
  constexpr std::string_view kTenantIdWasUsed =
      "SELECT 1 FROM auth.tenants WHERE tenant_id = $1 "
      "UNION ALL SELECT 1 FROM auth.deleted_tenants WHERE tenant_id = $1";
  return !tx.Exec(kTenantIdWasUsed, tenant_id).empty();
}

void Repository::InsertMember(db::Tx& tx, const pb::Membership& m) {
  constexpr std::string_view kInsertMember =
      "INSERT INTO auth.memberships (tenant_id, user_id, role) VALUES ($1, $2, $3)";
  tx.Exec(kInsertMember, m.tenant_id(), m.user_id(), m.role());
}

std::optional<pb::Membership> Repository::GetMember(db::Tx& tx, const std::string& tenant_id,
                                                    const std::string& user_id) {
  constexpr std::string_view kGetMember =
      GPUAAS_MEMBER_FROM "WHERE m.tenant_id = $1 AND m.user_id = $2";
  std::optional<db::Row> row = tx.Exec(kGetMember, tenant_id, user_id).First();
  if (!row) return std::nullopt;
  return MemberFromRow(*row);
}

bool Repository::UpdateMember(db::Tx& tx, const pb::Membership& m) {
  constexpr std::string_view kUpdateMember =
      "UPDATE auth.memberships SET role = $3 WHERE tenant_id = $1 AND user_id = $2";
  return tx.Exec(kUpdateMember, m.tenant_id(), m.user_id(), m.role()).affected_rows() == 1;
}

bool Repository::DeleteMember(db::Tx& tx, const std::string& tenant_id,
                              const std::string& user_id) {
  constexpr std::string_view kDeleteMember =
      "DELETE FROM auth.memberships WHERE tenant_id = $1 AND user_id = $2";
  return tx.Exec(kDeleteMember, tenant_id, user_id).affected_rows() == 1;
}

std::vector<pb::Membership> Repository::ListMembers(db::Tx& tx, const std::string& tenant_id,
                                                    const PageRequest& page) {
  constexpr std::string_view kListMembers =
      GPUAAS_MEMBER_FROM "WHERE m.tenant_id = $1 AND m.user_id > $2 ORDER BY m.user_id LIMIT $3";
  return tx.Exec(kListMembers, tenant_id, page.after, page.limit).Map(MemberFromRow);
}

std::vector<pb::Membership> Repository::MembershipsOf(db::Tx& tx, const std::string& user_id) {
  constexpr std::string_view kMembershipsOf =
      GPUAAS_MEMBER_FROM "WHERE m.user_id = $1 ORDER BY m.create_time, m.tenant_id";
  return tx.Exec(kMembershipsOf, user_id).Map(MemberFromRow);
}

std::vector<MemberKeys> Repository::MembersWithKeys(db::Tx& tx, const std::string& tenant_id) {
  constexpr std::string_view kMembersWithKeys =
      "SELECT m.user_id, u.user_name, m.role, u.disabled, u.ssh_public_keys "
      "FROM auth.memberships m JOIN auth.users u USING (user_id) "
      "WHERE m.tenant_id = $1 AND u.ssh_public_keys <> '' ORDER BY m.user_id";
  return tx.Exec(kMembersWithKeys, tenant_id).Map([&](const db::Row& r) {
    MemberKeys k;
    k.member.set_tenant_id(tenant_id);
    k.member.set_user_id(r.Get<std::string>(0));
    k.member.set_user_name(r.Get<std::string>(1));
    k.member.set_role(r.GetEnum<common::v1::Role>(2));
    k.disabled = r.Get<bool>(3);
    k.ssh_public_keys = absl::StrSplit(r.Get<std::string>(4), '\n', absl::SkipEmpty());
    return k;
  });
}

int64_t Repository::CountTenantAdmins(db::Tx& tx, const std::string& tenant_id) {
  constexpr std::string_view kCountTenantAdmins =
      "SELECT count(*) FROM auth.memberships WHERE tenant_id = $1 AND role = $2";
  return tx.Exec(kCountTenantAdmins, tenant_id, common::v1::ROLE_TENANT_ADMIN)[0].Get<int64_t>(0);
}

}  // namespace gpuaas::auth

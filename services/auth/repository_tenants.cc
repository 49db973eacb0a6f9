// Tenants and memberships.
#include "services/auth/repository.h"
#include "services/auth/repository_rows.h"

namespace gpuaas::auth {
namespace {

using internal::SetMicros;

constexpr std::string_view kTenantColumns =
    "tenant_id, display_name, max_gpus, max_instances, max_storage_bytes, " GPUAAS_MICROS(
        "create_time") ", " GPUAAS_MICROS("update_time");

pb::Tenant TenantFromRow(const pqxx::row& r) {
  pb::Tenant t;
  t.set_tenant_id(r[0].as<std::string>());
  t.set_display_name(r[1].as<std::string>());
  t.mutable_quota()->set_max_gpus(r[2].as<int64_t>());
  t.mutable_quota()->set_max_instances(r[3].as<int64_t>());
  t.mutable_quota()->set_max_storage_bytes(r[4].as<int64_t>());
  SetMicros(*t.mutable_create_time(), r[5].as<int64_t>());
  SetMicros(*t.mutable_update_time(), r[6].as<int64_t>());
  return t;
}

constexpr std::string_view kMemberColumns =
    "m.tenant_id, m.user_id, u.user_name, m.role, " GPUAAS_MICROS("m.create_time");

pb::Membership MemberFromRow(const pqxx::row& r) {
  pb::Membership m;
  m.set_tenant_id(r[0].as<std::string>());
  m.set_user_id(r[1].as<std::string>());
  m.set_user_name(r[2].as<std::string>());
  m.set_role(static_cast<common::v1::Role>(r[3].as<int>()));
  SetMicros(*m.mutable_create_time(), r[4].as<int64_t>());
  return m;
}

std::string Sql(std::string_view a, std::string_view b = {}, std::string_view c = {}) {
  return std::string(a).append(b).append(c);
}

}  // namespace

void Repository::InsertTenant(db::Tx& tx, const pb::Tenant& t) {
  constexpr std::string_view kInsert =
      "INSERT INTO auth.tenants (tenant_id, display_name, max_gpus, max_instances, "
      "max_storage_bytes) VALUES ($1, $2, $3, $4, $5)";
  tx.Exec(kInsert, t.tenant_id(), t.display_name(), t.quota().max_gpus(),
          t.quota().max_instances(), t.quota().max_storage_bytes());
}

std::optional<pb::Tenant> Repository::GetTenant(db::Tx& tx, const std::string& tenant_id) {
  pqxx::result r =
      tx.Exec(Sql("SELECT ", kTenantColumns, " FROM auth.tenants WHERE tenant_id = $1"), tenant_id);
  if (r.empty()) return std::nullopt;
  return TenantFromRow(r[0]);
}

std::vector<pb::Tenant> Repository::ListTenants(db::Tx& tx, const PageQuery& page) {
  pqxx::result r = tx.Exec(Sql("SELECT ", kTenantColumns,
                               " FROM auth.tenants WHERE tenant_id > $1 ORDER BY tenant_id LIMIT $2"),
                           page.after, page.limit);
  std::vector<pb::Tenant> out;
  for (const pqxx::row& row : r) out.push_back(TenantFromRow(row));
  return out;
}

bool Repository::UpdateTenant(db::Tx& tx, const pb::Tenant& t) {
  constexpr std::string_view kUpdate =
      "UPDATE auth.tenants SET display_name = $2, max_gpus = $3, max_instances = $4, "
      "max_storage_bytes = $5, update_time = now() WHERE tenant_id = $1";
  return tx.Exec(kUpdate, t.tenant_id(), t.display_name(), t.quota().max_gpus(),
                 t.quota().max_instances(), t.quota().max_storage_bytes())
             .affected_rows() == 1;
}

bool Repository::DeleteTenant(db::Tx& tx, const std::string& tenant_id) {
  return tx.Exec("DELETE FROM auth.tenants WHERE tenant_id = $1", tenant_id).affected_rows() == 1;
}

void Repository::InsertMember(db::Tx& tx, const pb::Membership& m) {
  tx.Exec("INSERT INTO auth.memberships (tenant_id, user_id, role) VALUES ($1, $2, $3)",
          m.tenant_id(), m.user_id(), static_cast<int>(m.role()));
}

std::optional<pb::Membership> Repository::GetMember(db::Tx& tx, const std::string& tenant_id,
                                                    const std::string& user_id) {
  pqxx::result r = tx.Exec(Sql("SELECT ", kMemberColumns,
                               " FROM auth.memberships m JOIN auth.users u USING (user_id) "
                               "WHERE m.tenant_id = $1 AND m.user_id = $2"),
                           tenant_id, user_id);
  if (r.empty()) return std::nullopt;
  return MemberFromRow(r[0]);
}

bool Repository::UpdateMember(db::Tx& tx, const pb::Membership& m) {
  return tx.Exec("UPDATE auth.memberships SET role = $3 WHERE tenant_id = $1 AND user_id = $2",
                 m.tenant_id(), m.user_id(), static_cast<int>(m.role()))
             .affected_rows() == 1;
}

bool Repository::DeleteMember(db::Tx& tx, const std::string& tenant_id, const std::string& user_id) {
  return tx.Exec("DELETE FROM auth.memberships WHERE tenant_id = $1 AND user_id = $2", tenant_id,
                 user_id)
             .affected_rows() == 1;
}

std::vector<pb::Membership> Repository::ListMembers(db::Tx& tx, const std::string& tenant_id,
                                                    const PageQuery& page) {
  pqxx::result r = tx.Exec(Sql("SELECT ", kMemberColumns,
                               " FROM auth.memberships m JOIN auth.users u USING (user_id) "
                               "WHERE m.tenant_id = $1 AND m.user_id > $2 "
                               "ORDER BY m.user_id LIMIT $3"),
                           tenant_id, page.after, page.limit);
  std::vector<pb::Membership> out;
  for (const pqxx::row& row : r) out.push_back(MemberFromRow(row));
  return out;
}

std::vector<pb::Membership> Repository::MembershipsOf(db::Tx& tx, const std::string& user_id) {
  pqxx::result r = tx.Exec(Sql("SELECT ", kMemberColumns,
                               " FROM auth.memberships m JOIN auth.users u USING (user_id) "
                               "WHERE m.user_id = $1 ORDER BY m.create_time, m.tenant_id"),
                           user_id);
  std::vector<pb::Membership> out;
  for (const pqxx::row& row : r) out.push_back(MemberFromRow(row));
  return out;
}

int64_t Repository::CountTenantAdmins(db::Tx& tx, const std::string& tenant_id) {
  return tx.Exec("SELECT count(*) FROM auth.memberships WHERE tenant_id = $1 AND role = 3",
                 tenant_id)[0][0]
      .as<int64_t>();
}

std::optional<std::string> Repository::FindRequest(db::Tx& tx, const std::string& method,
                                                   const std::string& caller,
                                                   const std::string& request_id) {
  pqxx::result r = tx.Exec(
      "SELECT result_id FROM auth.requests WHERE method = $1 AND caller = $2 AND request_id = $3",
      method, caller, request_id);
  if (r.empty()) return std::nullopt;
  return r[0][0].as<std::string>();
}

void Repository::RecordRequest(db::Tx& tx, const std::string& method, const std::string& caller,
                               const std::string& request_id, const std::string& result_id) {
  tx.Exec(
      "INSERT INTO auth.requests (method, caller, request_id, result_id) VALUES ($1, $2, $3, $4)",
      method, caller, request_id, result_id);
}

}  // namespace gpuaas::auth

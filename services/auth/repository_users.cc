// Users.
#include "services/auth/repository.h"
#include "services/auth/repository_rows.h"

namespace gpuaas::auth {
namespace {

using internal::SetMicros;

constexpr std::string_view kSelectUser =
    "SELECT u.user_id, u.user_name, u.display_name, u.disabled, u.global_role, "
    GPUAAS_MICROS("u.create_time") ", " GPUAAS_MICROS("u.update_time") ", u.password_hash "
    "FROM auth.users u ";

UserRecord UserFromRow(const pqxx::row& r) {
  UserRecord rec;
  pb::User& u = rec.user;
  u.set_user_id(r[0].as<std::string>());
  u.set_user_name(r[1].as<std::string>());
  u.set_display_name(r[2].as<std::string>());
  u.set_disabled(r[3].as<bool>());
  u.set_global_role(static_cast<common::v1::Role>(r[4].as<int>()));
  SetMicros(*u.mutable_create_time(), r[5].as<int64_t>());
  SetMicros(*u.mutable_update_time(), r[6].as<int64_t>());
  rec.password_hash = r[7].as<std::string>();
  return rec;
}

std::optional<UserRecord> FirstUser(const pqxx::result& r) {
  if (r.empty()) return std::nullopt;
  return UserFromRow(r[0]);
}

}  // namespace

void Repository::InsertUser(db::Tx& tx, const UserRecord& rec) {
  constexpr std::string_view kInsert =
      "INSERT INTO auth.users (user_id, user_name, display_name, password_hash, disabled, "
      "global_role) VALUES ($1, $2, $3, $4, $5, $6)";
  const pb::User& u = rec.user;
  tx.Exec(kInsert, u.user_id(), u.user_name(), u.display_name(), rec.password_hash, u.disabled(),
          static_cast<int>(u.global_role()));
}

std::optional<UserRecord> Repository::GetUser(db::Tx& tx, const std::string& user_id) {
  return FirstUser(tx.Exec(std::string(kSelectUser) + "WHERE u.user_id = $1", user_id));
}

std::optional<UserRecord> Repository::GetUserByName(db::Tx& tx, const std::string& user_name) {
  return FirstUser(tx.Exec(std::string(kSelectUser) + "WHERE u.user_name = $1", user_name));
}

std::vector<pb::User> Repository::ListUsers(db::Tx& tx, const std::optional<std::string>& tenant_id,
                                            const PageQuery& page) {
  constexpr std::string_view kAll = "WHERE u.user_id > $1 ORDER BY u.user_id LIMIT $2";
  constexpr std::string_view kOfTenant =
      "JOIN auth.memberships m USING (user_id) "
      "WHERE u.user_id > $1 AND m.tenant_id = $3 ORDER BY u.user_id LIMIT $2";
  pqxx::result r =
      tenant_id ? tx.Exec(std::string(kSelectUser).append(kOfTenant), page.after, page.limit,
                          *tenant_id)
                : tx.Exec(std::string(kSelectUser).append(kAll), page.after, page.limit);
  std::vector<pb::User> out;
  for (const pqxx::row& row : r) out.push_back(UserFromRow(row).user);
  return out;
}

bool Repository::UpdateUser(db::Tx& tx, const UserRecord& rec) {
  constexpr std::string_view kUpdate =
      "UPDATE auth.users SET display_name = $2, password_hash = $3, disabled = $4, "
      "global_role = $5, update_time = now() WHERE user_id = $1";
  const pb::User& u = rec.user;
  return tx.Exec(kUpdate, u.user_id(), u.display_name(), rec.password_hash, u.disabled(),
                 static_cast<int>(u.global_role()))
             .affected_rows() == 1;
}

bool Repository::DeleteUser(db::Tx& tx, const std::string& user_id) {
  return tx.Exec("DELETE FROM auth.users WHERE user_id = $1", user_id).affected_rows() == 1;
}

int64_t Repository::CountPlatformAdmins(db::Tx& tx) {
  return tx.Exec("SELECT count(*) FROM auth.users WHERE global_role = 4 AND NOT disabled")[0][0]
      .as<int64_t>();
}

}  // namespace gpuaas::auth

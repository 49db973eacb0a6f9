// Users.
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "libs/common/proto_time.h"
#include "services/auth/repository.h"

namespace gpuaas::auth {
namespace {

// SQL reads best as written.
// clang-format off
#define GPUAAS_USER_FROM                                                       \
  "SELECT u.user_id, u.user_name, u.display_name, u.disabled, u.global_role, " \
  GPUAAS_SQL_MICROS("u.create_time") ", " GPUAAS_SQL_MICROS("u.update_time")   \
  ", u.password_hash, u.ssh_public_keys FROM auth.users u "
// clang-format on

UserRecord UserFromRow(const db::Row& r) {
  UserRecord rec;
  pb::User& u = rec.user;
  u.set_user_id(r.Get<std::string>(0));
  u.set_user_name(r.Get<std::string>(1));
  u.set_display_name(r.Get<std::string>(2));
  u.set_disabled(r.Get<bool>(3));
  u.set_global_role(r.GetEnum<common::v1::Role>(4));
  *u.mutable_create_time() = ToProtoTime(r.GetTime(5));
  *u.mutable_update_time() = ToProtoTime(r.GetTime(6));
  rec.password_hash = r.Get<std::string>(7);
  for (absl::string_view key : absl::StrSplit(r.Get<std::string>(8), '\n', absl::SkipEmpty())) {
    u.add_ssh_public_keys(std::string(key));
  }
  return rec;
}

std::optional<UserRecord> FirstUser(const db::Result& r) {
  std::optional<db::Row> row = r.First();
  if (!row) return std::nullopt;
  return UserFromRow(*row);
}

pb::User UserOnly(const db::Row& r) { return UserFromRow(r).user; }

}  // namespace

void Repository::InsertUser(db::Tx& tx, const UserRecord& rec) {
  constexpr std::string_view kInsertUser =
      "INSERT INTO auth.users (user_id, user_name, display_name, password_hash, disabled, "
      "global_role, ssh_public_keys) VALUES ($1, $2, $3, $4, $5, $6, $7)";
  const pb::User& u = rec.user;
  tx.Exec(kInsertUser, u.user_id(), u.user_name(), u.display_name(), rec.password_hash,
          u.disabled(), u.global_role(), absl::StrJoin(u.ssh_public_keys(), "\n"));
}

std::optional<UserRecord> Repository::GetUser(db::Tx& tx, const std::string& user_id) {
  constexpr std::string_view kGetUser = GPUAAS_USER_FROM "WHERE u.user_id = $1";
  return FirstUser(tx.Exec(kGetUser, user_id));
}

std::optional<UserRecord> Repository::GetUserByName(db::Tx& tx, const std::string& user_name) {
  constexpr std::string_view kGetUserByName = GPUAAS_USER_FROM "WHERE u.user_name = $1";
  return FirstUser(tx.Exec(kGetUserByName, user_name));
}

std::vector<pb::User> Repository::ListUsers(db::Tx& tx, const std::optional<std::string>& tenant_id,
                                            const PageRequest& page) {
  constexpr std::string_view kListUsers =
      GPUAAS_USER_FROM "WHERE u.user_id > $1 ORDER BY u.user_id LIMIT $2";
  constexpr std::string_view kListTenantUsers = GPUAAS_USER_FROM
      "JOIN auth.memberships m USING (user_id) "
      "WHERE u.user_id > $1 AND m.tenant_id = $3 ORDER BY u.user_id LIMIT $2";
  if (tenant_id) {
    return tx.Exec(kListTenantUsers, page.after, page.limit, *tenant_id).Map(UserOnly);
  }
  return tx.Exec(kListUsers, page.after, page.limit).Map(UserOnly);
}

bool Repository::UpdateUser(db::Tx& tx, const UserRecord& rec) {
  constexpr std::string_view kUpdateUser =
      "UPDATE auth.users SET display_name = $2, password_hash = $3, disabled = $4, "
      "global_role = $5, ssh_public_keys = $6, update_time = now() WHERE user_id = $1";
  const pb::User& u = rec.user;
  return tx.Exec(kUpdateUser, u.user_id(), u.display_name(), rec.password_hash, u.disabled(),
                 u.global_role(), absl::StrJoin(u.ssh_public_keys(), "\n"))
             .affected_rows() == 1;
}

bool Repository::DeleteUser(db::Tx& tx, const std::string& user_id) {
  constexpr std::string_view kDeleteUser = "DELETE FROM auth.users WHERE user_id = $1";
  return tx.Exec(kDeleteUser, user_id).affected_rows() == 1;
}

int64_t Repository::CountPlatformAdmins(db::Tx& tx) {
  constexpr std::string_view kCountPlatformAdmins =
      "SELECT count(*) FROM auth.users WHERE global_role = $1 AND NOT disabled";
  return tx.Exec(kCountPlatformAdmins, common::v1::ROLE_PLATFORM_ADMIN)[0].Get<int64_t>(0);
}

bool Repository::HasUsers(db::Tx& tx) {
  constexpr std::string_view kHasUsers = "SELECT 1 FROM auth.users LIMIT 1";
  return !tx.Exec(kHasUsers).empty();
}

void Repository::LockFirstStart(db::Tx& tx) {
  constexpr std::string_view kLockFirstStart =
      "SELECT pg_advisory_xact_lock(hashtext('auth.first_start'))";
  tx.Exec(kLockFirstStart);
}

}  // namespace gpuaas::auth

// Forward-only migrations (style rule 39): each one runs in its own transaction, serialised
// across processes by an advisory lock keyed by the schema, and is recorded in
// <schema>.schema_migrations.
#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "libs/common/logging.h"
#include "libs/common/status_macros.h"
#include "libs/db/db.h"

namespace gpuaas::db {
namespace {

// First key of the two-key advisory lock space, so our locks never collide with services'
// one-key pg_advisory_xact_lock(hashtext(...)) calls. 0x6d696772 is "migr".
constexpr int32_t kMigrationLockClass = 0x6d696772;

// Migrations may rewrite large tables, and a second process waits behind the first one's lock
// for as long as that takes, so the pool's per-statement budget does not apply.
constexpr std::string_view kMigrationStatementTimeout = "15min";

bool IsPlainIdentifier(std::string_view name) {
  if (name.empty() || name.size() > 63) return false;
  for (size_t i = 0; i < name.size(); ++i) {
    const char c = name[i];
    const bool ok = (c >= 'a' && c <= 'z') || c == '_' || (i > 0 && c >= '0' && c <= '9');
    if (!ok) return false;
  }
  return true;
}

absl::Status Validate(std::string_view schema, std::span<const Migration> migrations) {
  if (!IsPlainIdentifier(schema)) {
    return absl::InvalidArgumentError(absl::StrCat("migrate: schema \"", std::string(schema),
                                                   "\" is not a lower-case identifier"));
  }
  int last = 0;
  for (const Migration& m : migrations) {
    if (m.version <= last) {
      return absl::InvalidArgumentError(
          absl::StrCat("migrate: ", std::string(schema), " migration ", std::string(m.name),
                       " (version ", m.version, ") is not after version ", last));
    }
    last = m.version;
  }
  return absl::OkStatus();
}

// Takes the schema's migration lock and makes sure the schema and the bookkeeping table exist.
// The lock comes first because CREATE ... IF NOT EXISTS is not safe against a concurrent
// creator: both can pass the existence check and one then fails on the catalog's unique index.
void LockAndPrepare(Tx& tx, const std::string& schema) {
  tx.Exec("SELECT pg_advisory_xact_lock($1, hashtext($2))", kMigrationLockClass,
          std::string(schema));
  tx.Exec(absl::StrCat("SET LOCAL statement_timeout = '", std::string(kMigrationStatementTimeout),
                       "'"));
  // CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when the schema exists, and
  // a service role that was handed its schema by the operator has no such right.
  if (tx.Exec("SELECT 1 FROM pg_namespace WHERE nspname = $1", std::string(schema)).empty()) {
    tx.ExecScript(absl::StrCat("CREATE SCHEMA ", schema));
  }
  tx.ExecScript(absl::StrCat("CREATE TABLE IF NOT EXISTS ", schema,
                             ".schema_migrations (version int PRIMARY KEY, name text NOT NULL, "
                             "applied_at timestamptz NOT NULL DEFAULT now())"));
}

absl::StatusOr<std::set<int>> AppliedVersions(Pool& pool, const std::string& schema) {
  std::set<int> applied;
  GPUAAS_RETURN_IF_ERROR(pool.RunInTransaction("db.migrate.read", [&](Tx& tx) {
    applied.clear();  // the callback may run more than once
    LockAndPrepare(tx, schema);
    Result rows = tx.ExecScript(absl::StrCat("SELECT version FROM ", schema, ".schema_migrations"));
    for (const Row& row : rows) applied.insert(row.Get<int>(0));
    return absl::OkStatus();
  }));
  return applied;
}

}  // namespace

absl::Status Migrate(Pool& pool, std::string_view schema_view,
                     std::span<const Migration> migrations) {
  GPUAAS_RETURN_IF_ERROR(Validate(schema_view, migrations));
  const std::string schema(schema_view);
  GPUAAS_ASSIGN_OR_RETURN(std::set<int> applied, AppliedVersions(pool, schema));
  for (const Migration& m : migrations) {
    if (applied.count(m.version) != 0) continue;
    bool ran = false;
    absl::Status status = pool.RunInTransaction("db.migrate.apply", [&](Tx& tx) {
      LockAndPrepare(tx, schema);
      // Re-checked under the lock: another process may have applied it since we looked.
      Result done =
          tx.Exec(absl::StrCat("SELECT 1 FROM ", schema, ".schema_migrations WHERE version = $1"),
                  m.version);
      ran = done.empty();
      if (!ran) return absl::OkStatus();
      tx.ExecScript(absl::StrCat("SET LOCAL search_path TO ", schema));
      // Simple-query protocol: a migration file may hold many statements.
      tx.ExecScript(std::string(m.sql));
      tx.Exec(absl::StrCat("INSERT INTO ", schema,
                           ".schema_migrations (version, name) VALUES ($1, $2)"),
              m.version, std::string(m.name));
      return absl::OkStatus();
    });
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("migration ", schema, "/", std::string(m.name),
                                       " failed: ", status.message()));
    }
    if (ran) Logger("db")->info("applied migration {}/{}", schema, m.name);
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::db

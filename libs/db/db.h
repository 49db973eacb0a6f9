// PostgreSQL access for every service: a connection pool, transactions with retry, the
// mapping of libpqxx errors to absl::Status, and embedded forward-only migrations.
//
// libpqxx stays behind this folder's API: repositories call Tx::Exec and read db::Result and
// db::Row (rows.h), so moving to libpqxx 7/8 (`pqxx::params`) touches only libs/db.
#pragma once

#include <functional>
#include <memory>
#include <pqxx/pqxx>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/db/migration.h"
#include "libs/db/rows.h"

namespace gpuaas::db {

struct PoolOptions {
  std::string dsn;  // libpq connection string or URI
  int size = 8;     // connections opened lazily, at most this many
  absl::Duration acquire_timeout = absl::Seconds(5);
  // Set once per connection when it opens; a transaction may SET LOCAL its own.
  absl::Duration statement_timeout = absl::Seconds(5);
  // Bounds each connection attempt so a vanished server fails fast instead of hanging; added to
  // the DSN unless it sets connect_timeout itself. libpq rounds values under 2s up to 2s.
  absl::Duration connect_timeout = absl::Seconds(3);
};

class Pool;

// One transaction on a pooled connection. Only valid inside RunInTransaction's callback.
class Tx final {
 public:
  explicit Tx(pqxx::transaction_base& work) : work_(work) {}

  // Runs `sql` with $1..$n bound to `args` (std::optional<T> binds NULL; enums bind their
  // numbers, db::Bytes binds bytea, absl::Time binds epoch microseconds: see rows.h). Throws
  // libpqxx errors, which RunInTransaction turns into a Status. `sql` is one statement, a named
  // constant; the server parses and plans it once per connection (a prepared statement).
  template <typename... Args>
  Result Exec(std::string_view sql, const Args&... args) {
    return Result(work_.exec_prepared(Prepare(sql), internal::Bind(args)...));
  }

  // Runs a script of one or more statements without parameters (simple-query protocol, not
  // prepared): for migrations and DDL built from trusted names only, never from input.
  Result ExecScript(std::string_view sql) { return Result(work_.exec(std::string(sql))); }

 private:
  // Registers `sql` on this connection under a name derived from its text and returns the name.
  std::string Prepare(std::string_view sql);

  pqxx::transaction_base& work_;
};

struct RetryOptions {
  // SERIALIZABLE transactions that insert near each other conflict often (PostgreSQL locks
  // predicates by B-tree leaf page): four clients creating tenants at once failed five attempts
  // in a row about once in 4,000 calls, so a conflict gets ten, waiting at most 1.1 s in all.
  int max_attempts = 10;
  absl::Duration initial_backoff = absl::Milliseconds(5);
  absl::Duration max_backoff = absl::Milliseconds(200);
};

// A fixed-capacity pool of connections. Thread-safe. Connections are opened lazily; a broken
// connection is dropped and reopened on the next acquire.
class Pool final {
 public:
  // Does not connect; the first transaction does. Fails only on bad options.
  static absl::StatusOr<std::unique_ptr<Pool>> Create(PoolOptions options);
  ~Pool();

  // Runs `fn` in a read-write transaction (SERIALIZABLE when `serializable`, else READ
  // COMMITTED) and commits when it returns OK; rolls back otherwise and returns its status.
  // Statements run under PoolOptions::statement_timeout unless `fn` sets its own with SET
  // LOCAL (never plain SET: that would outlive the transaction on a pooled connection). Retries the
  // whole of `fn` on serialization failure, deadlock, broken connection and read-only node (a
  // standby the connection reached before a failover) (exceptions only, never a Status `fn`
  // returns), each attempt on a fresh connection with exponential backoff; never on in_doubt.
  // A lost connection also drops the pool's idle ones, so after a failover the next attempt
  // connects afresh (a multi-host DSN with target_session_attrs=read-write finds the new
  // primary). So `fn` may run more than once: it must reset anything it captures and make no
  // calls outside the database. `name` labels logs only. Blocks. Errors: UNAVAILABLE (database
  // unreachable, read-only after retries, or pool exhausted for acquire_timeout), ABORTED
  // (conflict left after retries), DEADLINE_EXCEEDED (statement timeout), UNKNOWN (connection
  // lost during COMMIT: the outcome is unknown), others as MapException.
  absl::Status RunInTransaction(std::string_view name, const std::function<absl::Status(Tx&)>& fn,
                                bool serializable = false, RetryOptions retry = {});

  // Convenience for read-only work that yields a value.
  template <typename T>
  absl::StatusOr<T> Read(std::string_view name, const std::function<absl::StatusOr<T>(Tx&)>& fn) {
    absl::StatusOr<T> out = absl::InternalError("not run");
    absl::Status s = RunInTransaction(name, [&](Tx& tx) {
      out = fn(tx);
      return out.status();
    });
    if (!s.ok()) return s;
    return out;
  }

  // Implementation detail, public for the connection lease type.
  class Impl;

 private:
  explicit Pool(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Maps an exception thrown by libpqxx (or anything else) to a Status, per design:
// unique_violation → ALREADY_EXISTS, check_violation → INVALID_ARGUMENT,
// foreign_key_violation → FAILED_PRECONDITION, serialization_failure / deadlock → ABORTED,
// broken_connection / too_many_connections / cannot_connect / read_only_sql_transaction
// (25006: a standby) → UNAVAILABLE,
// query_canceled (57014) → DEADLINE_EXCEEDED, in_doubt_error → UNKNOWN, other → INTERNAL.
// The message names the constraint where there is one, never the SQL or its parameters.
absl::Status MapException(const std::exception& e);

// Runs one statement that cannot run inside a transaction (CREATE DATABASE, DROP DATABASE) on
// a connection of its own to `dsn`, for administration tools and test fixtures. `sql` is built
// from trusted names only. Blocks. Errors: as MapException.
absl::Status ExecWithoutTransaction(const std::string& dsn, std::string_view sql);

// Applies the migrations of `schema` that are not yet recorded in <schema>.schema_migrations,
// in version order, each in its own transaction, under a transaction-scoped advisory lock so
// two processes starting at once apply each migration exactly once. Creates the schema and
// the table if missing. Blocks. Errors: UNAVAILABLE, or the failing migration's error.
absl::Status Migrate(Pool& pool, std::string_view schema, std::span<const Migration> migrations);

}  // namespace gpuaas::db

// The one place libpqxx errors become absl::Status (style rule 36).
#include "libs/db/internal/errors.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "libs/db/db.h"

namespace gpuaas::db {
namespace {

// libpqxx 6.4 builds some exception types without their SQLSTATE, so both are checked.
std::string_view SqlState(const std::exception& e) {
  if (const auto* sql = dynamic_cast<const pqxx::sql_error*>(&e)) return sql->sqlstate();
  return {};
}

// The server names the violated constraint in the first line of its message, e.g.
// `duplicate key value violates unique constraint "users_email_key"`. Later lines (DETAIL)
// quote the offending values, which must not leak, so only the name is taken.
std::string ConstraintName(const std::exception& e) {
  std::string_view msg = e.what();
  msg = msg.substr(0, msg.find('\n'));
  constexpr std::string_view kMarker = "constraint \"";
  size_t start = msg.find(kMarker);
  if (start == std::string_view::npos) return "unknown";
  start += kMarker.size();
  size_t end = msg.find('"', start);
  if (end == std::string_view::npos) return "unknown";
  return std::string(msg.substr(start, end - start));
}

// The first line of a connection error ("connection to server ... failed: Connection refused")
// carries no SQL and no parameters.
std::string FirstLine(const std::exception& e) {
  std::string_view msg = e.what();
  msg = msg.substr(0, msg.find('\n'));
  return std::string(msg);
}

bool IsServerShutdown(std::string_view state) {
  // 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now.
  return state == "57P01" || state == "57P02" || state == "57P03";
}

}  // namespace

namespace internal {

bool IsConnectionLost(const std::exception& e) {
  if (dynamic_cast<const pqxx::broken_connection*>(&e) != nullptr) return true;
  std::string_view state = SqlState(e);
  return state.starts_with("08") || IsServerShutdown(state);
}

bool IsReadOnlyNode(const std::exception& e) { return SqlState(e) == "25006"; }

bool IsStalePreparedStatement(const std::exception& e) {
  return SqlState(e) == "0A000" &&
         std::string_view(e.what()).find("cached plan must not change result type") !=
             std::string_view::npos;
}

bool IsRetryable(const std::exception& e) {
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) return false;
  if (dynamic_cast<const pqxx::statement_completion_unknown*>(&e) != nullptr) return false;
  if (dynamic_cast<const pqxx::serialization_failure*>(&e) != nullptr) return true;
  if (dynamic_cast<const pqxx::deadlock_detected*>(&e) != nullptr) return true;
  std::string_view state = SqlState(e);
  if (state == "40001" || state == "40P01") return true;
  return IsConnectionLost(e) || IsReadOnlyNode(e) || IsStalePreparedStatement(e);
}

}  // namespace internal

absl::Status MapException(const std::exception& e) {
  // Order matters: the specific pqxx types derive from the general ones.
  if (dynamic_cast<const pqxx::in_doubt_error*>(&e) != nullptr) {
    return absl::UnknownError("database commit outcome unknown (connection lost during COMMIT)");
  }
  if (dynamic_cast<const pqxx::statement_completion_unknown*>(&e) != nullptr) {
    return absl::UnknownError("database statement outcome unknown");
  }
  std::string_view state = SqlState(e);
  if (dynamic_cast<const pqxx::serialization_failure*>(&e) != nullptr || state == "40001") {
    return absl::AbortedError("transaction conflict (serialization failure); retry");
  }
  if (dynamic_cast<const pqxx::deadlock_detected*>(&e) != nullptr || state == "40P01") {
    return absl::AbortedError("transaction conflict (deadlock); retry");
  }
  if (dynamic_cast<const pqxx::transaction_rollback*>(&e) != nullptr) {
    return absl::AbortedError("transaction rolled back by the server; retry");
  }
  if (dynamic_cast<const pqxx::too_many_connections*>(&e) != nullptr || state == "53300") {
    return absl::UnavailableError("database has too many connections");
  }
  if (internal::IsConnectionLost(e)) {
    return absl::UnavailableError(absl::StrCat("database unavailable: ", FirstLine(e)));
  }
  if (internal::IsReadOnlyNode(e)) {
    return absl::UnavailableError("database unavailable: the server is a read-only standby");
  }
  if (dynamic_cast<const pqxx::unique_violation*>(&e) != nullptr || state == "23505") {
    return absl::AlreadyExistsError(
        absl::StrCat("unique constraint ", ConstraintName(e), " violated"));
  }
  if (dynamic_cast<const pqxx::check_violation*>(&e) != nullptr || state == "23514") {
    return absl::InvalidArgumentError(
        absl::StrCat("check constraint ", ConstraintName(e), " violated"));
  }
  if (dynamic_cast<const pqxx::foreign_key_violation*>(&e) != nullptr || state == "23503") {
    return absl::FailedPreconditionError(
        absl::StrCat("foreign key constraint ", ConstraintName(e), " violated"));
  }
  if (state == "57014") {
    return absl::DeadlineExceededError("database statement timeout");
  }
  if (!state.empty()) {
    return absl::InternalError(absl::StrCat("database error (sqlstate ", std::string(state), ")"));
  }
  if (dynamic_cast<const pqxx::pqxx_exception*>(&e) != nullptr) {
    return absl::InternalError("database client error");
  }
  return absl::InternalError("unexpected exception in database code");
}

}  // namespace gpuaas::db

// Pool construction and RunInTransaction: one transaction attempt at a time, retried whole on a
// fresh connection when libpqxx's transactor rules allow (style rule 35).
#include <algorithm>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/common/backoff.h"
#include "libs/common/logging.h"
#include "libs/db/db.h"
#include "libs/db/dsn.h"
#include "libs/db/internal/errors.h"
#include "libs/db/internal/pool_impl.h"

namespace gpuaas::db {
namespace {

struct Attempt {
  absl::Status status;
  bool retryable = false;
  bool connection_lost = false;
};

int64_t CeilSeconds(absl::Duration d) {
  return absl::ToInt64Seconds(absl::Ceil(d, absl::Seconds(1)));
}

// Runs `fn` once in its own transaction on `lease`'s connection. libpqxx sends the isolation
// level with BEGIN, so a transaction costs BEGIN, fn's statements and COMMIT: nothing more.
template <typename Transaction>
Attempt RunOnce(Pool::Impl::Lease& lease, std::string_view name,
                const std::function<absl::Status(Tx&)>& fn) {
  try {
    Transaction work(lease.conn());
    Tx tx(work);
    absl::Status status = fn(tx);
    if (!status.ok()) {
      work.abort();
      return {std::move(status), false};
    }
    work.commit();
    return {absl::OkStatus(), false};
  } catch (const std::exception& e) {
    // A demoted node counts as lost: this connection, and its idle siblings that reached the
    // same node, must make way for connections to the new primary.
    const bool lost =
        internal::IsConnectionLost(e) || internal::IsReadOnlyNode(e) || !lease.conn().is_open();
    if (lost || internal::IsStalePreparedStatement(e)) lease.MarkBroken();
    absl::Status status = MapException(e);
    // A connection lost before COMMIT rolled the transaction back; in_doubt (lost during
    // COMMIT) is excluded by IsRetryable and by the UNKNOWN check.
    const bool retryable = internal::IsRetryable(e) || (lost && !absl::IsUnknown(status));
    if (absl::IsInternal(status) || absl::IsUnknown(status)) {
      // Only the first line: later lines (DETAIL) may quote parameter values.
      std::string_view what = e.what();
      Logger("db")->error("transaction {}: {}: {}", name, std::string(status.message()),
                          what.substr(0, what.find('\n')));
    }
    return {std::move(status), retryable, lost};
  }
}

// One attempt, from acquiring a connection to giving it back.
Attempt AcquireAndRun(Pool::Impl& pool, std::string_view name,
                      const std::function<absl::Status(Tx&)>& fn, bool serializable) {
  bool connect_failed = false;
  absl::StatusOr<Pool::Impl::Lease> lease = pool.Acquire(&connect_failed);
  if (!lease.ok()) {
    // A failed connect is worth retrying (the server may be restarting); a pool that stayed
    // exhausted for acquire_timeout is not.
    return {lease.status(), connect_failed, false};
  }
  Attempt result = serializable ? RunOnce<pqxx::transaction<pqxx::serializable>>(*lease, name, fn)
                                : RunOnce<pqxx::work>(*lease, name, fn);
  if (result.connection_lost) pool.DiscardIdle();
  return result;
}

}  // namespace

std::string Tx::Prepare(std::string_view sql) {
  // libpqxx ignores a second prepare() of the same name and text and sends the statement to
  // the server on its first use. A 64-bit hash of the text names it: two of our statements
  // colliding is out of reach, and would fail loudly (argument_error), not silently.
  std::string name = absl::StrCat("gpuaas_", absl::Hex(std::hash<std::string_view>{}(sql)));
  work_.conn().prepare(name, std::string(sql));
  return name;
}

absl::StatusOr<std::unique_ptr<Pool>> Pool::Create(PoolOptions options) {
  if (options.dsn.empty()) return absl::InvalidArgumentError("pool: dsn is empty");
  if (options.size < 1) return absl::InvalidArgumentError("pool: size must be at least 1");
  if (options.acquire_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("pool: acquire_timeout must not be negative");
  }
  if (options.statement_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("pool: statement_timeout must not be negative");
  }
  if (options.connect_timeout <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError("pool: connect_timeout must be positive");
  }
  if (!DsnHasParam(options.dsn, "connect_timeout")) {
    options.dsn = WithDsnParam(options.dsn, "connect_timeout",
                               std::to_string(CeilSeconds(options.connect_timeout)));
  }
  return std::unique_ptr<Pool>(new Pool(std::make_unique<Impl>(std::move(options))));
}

Pool::Pool(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Pool::~Pool() = default;

absl::Status Pool::RunInTransaction(std::string_view name,
                                    const std::function<absl::Status(Tx&)>& fn, bool serializable,
                                    RetryOptions retry) {
  const int max_attempts = std::max(1, retry.max_attempts);
  // Jitter keeps conflicting transactions from colliding again in lockstep: attempt n waits
  // between initial_backoff * 2^(n-1) and twice that, up to max_backoff.
  Backoff backoff({.initial = 2 * retry.initial_backoff, .max = retry.max_backoff});
  for (int attempt = 1;; ++attempt) {
    Attempt result = AcquireAndRun(*impl_, name, fn, serializable);
    if (result.status.ok() || !result.retryable || attempt >= max_attempts) {
      return result.status;
    }
    Logger("db")->debug("transaction {}: attempt {} failed ({}), retrying", name, attempt,
                        result.status.ToString());
    absl::SleepFor(backoff.Next());
  }
}

absl::Status ExecWithoutTransaction(const std::string& dsn, std::string_view sql) {
  try {
    pqxx::connection conn(dsn);
    pqxx::nontransaction tx(conn);
    tx.exec(std::string(sql));
    return absl::OkStatus();
  } catch (const std::exception& e) {
    return MapException(e);
  }
}

}  // namespace gpuaas::db

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "libs/common/logging.h"
#include "libs/db/internal/pool_impl.h"

namespace gpuaas::db {

Pool::Impl::Lease::~Lease() {
  if (conn_ == nullptr) return;  // moved from
  // A connection can die under a callback that swallowed the error, so look before pooling it.
  pool_->Return(std::move(conn_), broken_ || !conn_->is_open());
}

absl::StatusOr<Pool::Impl::Lease> Pool::Impl::Acquire(bool* connect_failed) {
  *connect_failed = false;
  {
    absl::MutexLock lock(&mu_);
    auto available = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return !idle_.empty() || open_ < options_.size;
    };
    if (!mu_.AwaitWithTimeout(absl::Condition(&available), options_.acquire_timeout)) {
      return absl::UnavailableError(absl::StrCat("database pool exhausted: all ", options_.size,
                                                 " connections busy for ",
                                                 absl::FormatDuration(options_.acquire_timeout)));
    }
    if (!idle_.empty()) {
      std::unique_ptr<pqxx::connection> conn = std::move(idle_.back());
      idle_.pop_back();
      return Lease(*this, std::move(conn));
    }
    ++open_;  // reserve the slot, then connect without holding the lock
  }
  try {
    auto conn = std::make_unique<pqxx::connection>(options_.dsn);
    // Once per connection rather than a SET LOCAL round trip in every transaction.
    conn->set_variable("statement_timeout",
                       std::to_string(absl::ToInt64Milliseconds(options_.statement_timeout)));
    return Lease(*this, std::move(conn));
  } catch (const std::exception& e) {
    {
      absl::MutexLock lock(&mu_);
      --open_;
    }
    *connect_failed = true;
    absl::Status status = MapException(e);
    Logger("db")->warn("connect failed: {}", std::string(status.message()));
    return absl::UnavailableError(status.message());
  }
}

void Pool::Impl::DiscardIdle() {
  std::vector<std::unique_ptr<pqxx::connection>> doomed;
  {
    absl::MutexLock lock(&mu_);
    doomed.swap(idle_);
    open_ -= static_cast<int>(doomed.size());
  }
  // Closed here, outside the lock.
}

void Pool::Impl::Return(std::unique_ptr<pqxx::connection> conn, bool broken) {
  if (broken) {
    conn.reset();  // close before freeing the slot, so `size` bounds real connections
    absl::MutexLock lock(&mu_);
    --open_;
    return;
  }
  absl::MutexLock lock(&mu_);
  idle_.push_back(std::move(conn));
}

}  // namespace gpuaas::db

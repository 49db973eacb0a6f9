// Pool::Impl: the bounded set of libpqxx connections behind Pool, and the lease that lends one
// out for a single transaction attempt.
#pragma once

#include <memory>
#include <pqxx/pqxx>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "libs/db/db.h"

namespace gpuaas::db {

class Pool::Impl final {
 public:
  // Returns a connection to the pool on destruction, or closes it when marked broken.
  class Lease final {
   public:
    Lease(Impl& pool, std::unique_ptr<pqxx::connection> conn)
        : pool_(&pool), conn_(std::move(conn)) {}
    Lease(Lease&& other) noexcept
        : pool_(other.pool_), conn_(std::move(other.conn_)), broken_(other.broken_) {}
    Lease& operator=(Lease&&) = delete;
    ~Lease();

    pqxx::connection& conn() { return *conn_; }
    void MarkBroken() { broken_ = true; }

   private:
    Impl* pool_;
    std::unique_ptr<pqxx::connection> conn_;
    bool broken_ = false;
  };

  // `options` must already be validated and carry the final DSN.
  explicit Impl(PoolOptions options) : options_(std::move(options)) {}

  const PoolOptions& options() const { return options_; }

  // Hands out an idle connection, or opens one while fewer than `size` are open, waiting up to
  // acquire_timeout for either. Blocks. Errors: UNAVAILABLE (pool exhausted or connect failed;
  // `*connect_failed` tells which, so the caller can retry only the latter).
  absl::StatusOr<Lease> Acquire(bool* connect_failed);

  // Closes every idle connection. Called once one connection is found broken: its siblings
  // almost always share its fate (the server restarted), and handing them out one by one would
  // spend a retry on each.
  void DiscardIdle();

 private:
  void Return(std::unique_ptr<pqxx::connection> conn, bool broken);

  const PoolOptions options_;
  absl::Mutex mu_;
  std::vector<std::unique_ptr<pqxx::connection>> idle_ ABSL_GUARDED_BY(mu_);
  int open_ ABSL_GUARDED_BY(mu_) = 0;  // idle plus leased
};

}  // namespace gpuaas::db

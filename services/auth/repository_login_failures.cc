// Login failures: the runs login_guard.h counts, shared by every replica.
#include <algorithm>

#include "services/auth/repository.h"

namespace gpuaas::auth {
namespace {

// "Never" is stored as the epoch: a timestamptz has no infinite past that micros map to.
absl::Time Stored(absl::Time t) { return std::max(t, absl::UnixEpoch()); }

}  // namespace

absl::Time Repository::LockedUntil(db::Tx& tx,
                                   const std::vector<std::pair<std::string, std::string>>& keys) {
  constexpr std::string_view kLockedUntil =
      "SELECT " GPUAAS_SQL_MICROS("locked_until") " FROM auth.login_failures "
      "WHERE scope = $1 AND throttle_key = $2";
  absl::Time latest = absl::InfinitePast();
  for (const auto& [scope, key] : keys) {
    if (std::optional<db::Row> row = tx.Exec(kLockedUntil, scope, key).First()) {
      latest = std::max(latest, row->GetTime(0));
    }
  }
  return latest;
}

FailureRun Repository::LockFailureRun(db::Tx& tx, const std::string& scope,
                                      const std::string& key) {
  // A new run starts lapsed and unlocked: the epoch stands for "never".
  constexpr std::string_view kEnsureRun =
      "INSERT INTO auth.login_failures (scope, throttle_key, failures, last_failure, "
      "locked_until) VALUES ($1, $2, 0, 'epoch', 'epoch') ON CONFLICT DO NOTHING";
  constexpr std::string_view kLockRun =
      "SELECT failures, " GPUAAS_SQL_MICROS("last_failure") ", "
      GPUAAS_SQL_MICROS("locked_until") " FROM auth.login_failures "
      "WHERE scope = $1 AND throttle_key = $2 FOR UPDATE";
  tx.Exec(kEnsureRun, scope, key);
  db::Row row = *tx.Exec(kLockRun, scope, key).First();
  return FailureRun{.failures = row.Get<int32_t>(0),
                    .last_failure = row.GetTime(1),
                    .locked_until = row.GetTime(2)};
}

void Repository::SaveFailureRun(db::Tx& tx, const std::string& scope, const std::string& key,
                                const FailureRun& run) {
  constexpr std::string_view kSaveRun =
      "UPDATE auth.login_failures SET failures = $3, last_failure "
      "= " GPUAAS_SQL_FROM_MICROS("$4") ", locked_until = " GPUAAS_SQL_FROM_MICROS(
          "$5") " WHERE scope = $1 AND throttle_key = $2";
  tx.Exec(kSaveRun, scope, key, run.failures, Stored(run.last_failure), Stored(run.locked_until));
}

void Repository::DeleteFailureRun(db::Tx& tx, const std::string& scope, const std::string& key) {
  constexpr std::string_view kDeleteRun =
      "DELETE FROM auth.login_failures WHERE scope = $1 AND throttle_key = $2";
  tx.Exec(kDeleteRun, scope, key);
}

void Repository::SweepFailureRuns(db::Tx& tx, absl::Time before, absl::Time now) {
  // Bounded, so a sweep never holds many rows; the next failure sweeps on.
  constexpr std::string_view kSweepRuns =
      "DELETE FROM auth.login_failures WHERE ctid IN (SELECT ctid FROM auth.login_failures "
      "WHERE last_failure < " GPUAAS_SQL_FROM_MICROS("$1") " AND locked_until < "
      GPUAAS_SQL_FROM_MICROS("$2") " LIMIT 100 FOR UPDATE SKIP LOCKED)";
  tx.Exec(kSweepRuns, before, now);
}

}  // namespace gpuaas::auth

#include "services/auth/login_guard.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace gpuaas::auth {
namespace {

constexpr std::string_view kClientScope = "client";

std::string AccountScope(const LoginAttempt& a) {
  return a.kind == LoginAttempt::Kind::kPassword ? "user_at_client" : "key_at_client";
}

// A newline occurs in no user name, key id or address, so no two pairs share a key.
std::string AccountKey(const LoginAttempt& a) { return absl::StrCat(a.account, "\n", a.client); }

}  // namespace

absl::Status LoginGuard::Check(const LoginAttempt& attempt) {
  absl::Time locked_until;
  absl::Status read = pool_.RunInTransaction("auth.login_guard_check", [&](db::Tx& tx) {
    locked_until = repo_.LockedUntil(tx, {{std::string(kClientScope), attempt.client},
                                          {AccountScope(attempt), AccountKey(attempt)}});
    return absl::OkStatus();
  });
  if (!read.ok()) return read;
  return Refusal(FailureRun{.locked_until = locked_until}, clock_.Now());
}

absl::Status LoginGuard::RecordFailure(const LoginAttempt& attempt) {
  const absl::Time now = clock_.Now();
  const std::pair<std::string, const ThrottleRule*> runs[] = {
      {std::string(kClientScope), &options_.client},
      {AccountScope(attempt), &options_.account_at_client}};
  return pool_.RunInTransaction("auth.login_guard_failure", [&](db::Tx& tx) {
    // Always in this order, so two failures at once never wait on each other's rows crosswise.
    for (const auto& [scope, rule] : runs) {
      const std::string key = scope == kClientScope ? attempt.client : AccountKey(attempt);
      repo_.SaveFailureRun(tx, scope, key,
                           AfterFailure(repo_.LockFailureRun(tx, scope, key), now, *rule));
    }
    const absl::Duration keep =
        std::max(options_.client.failure_window, options_.account_at_client.failure_window);
    repo_.SweepFailureRuns(tx, now - keep, now);
    return absl::OkStatus();
  });
}

absl::Status LoginGuard::RecordSuccess(const LoginAttempt& attempt) {
  return pool_.RunInTransaction("auth.login_guard_success", [&](db::Tx& tx) {
    repo_.DeleteFailureRun(tx, AccountScope(attempt), AccountKey(attempt));
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::auth

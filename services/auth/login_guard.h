// Throttles password and API-key guessing by where it comes from, with the counts in PostgreSQL
// so that every auth replica sees the same ones (auth.login_failures, 0005_login_failures.sql).
//
// Two runs of failures are kept per attempt: the client address's own (a guesser trying many
// accounts), and the account's at that address (a guesser trying one account). Neither is
// the account's alone: a guesser elsewhere never locks the account's owner out, and the right
// password from an address that has not been failing always gets through. A refusal is
// RESOURCE_EXHAUSTED naming no account, checked before the password is, so a throttled
// guesser learns nothing and costs no scrypt.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "libs/common/clock.h"
#include "libs/db/db.h"
#include "services/auth/credentials/login_throttle.h"
#include "services/auth/repository.h"

namespace gpuaas::auth {

struct LoginGuardOptions {
  // One account (a user name, or an API key's id) at one client address.
  ThrottleRule account_at_client{.max_failures = 5,
                                 .failure_window = absl::Minutes(15),
                                 .base_lockout = absl::Seconds(1),
                                 .max_lockout = absl::Minutes(15)};
  // One client address, whatever it tries: looser, for a NAT's many honest typos.
  ThrottleRule client{.max_failures = 20,
                      .failure_window = absl::Minutes(15),
                      .base_lockout = absl::Seconds(1),
                      .max_lockout = absl::Minutes(15)};
};

// What is being tried, and from where.
struct LoginAttempt {
  enum class Kind { kPassword, kApiKey };
  Kind kind = Kind::kPassword;
  std::string account;  // the user name, or the API key's id
  std::string client;   // the client's address, as ThrottleAddress normalizes it
};

class LoginGuard final {
 public:
  LoginGuard(db::Pool& pool, Repository& repo, const Clock& clock, LoginGuardOptions options = {})
      : pool_(pool), repo_(repo), clock_(clock), options_(options) {}

  // OK, or RESOURCE_EXHAUSTED "too many failed attempts from your address, retry in Ns" while
  // the client or the account at the client is locked. UNAVAILABLE when the database is down.
  // Blocks on PostgreSQL.
  absl::Status Check(const LoginAttempt& attempt);

  // A wrong password or key: both runs grow, and lock past their rule's max_failures.
  absl::Status RecordFailure(const LoginAttempt& attempt);

  // The right one: the account's run at this client is forgotten. The client's own run is
  // kept, so that a guesser's own good account cannot wipe the runs its guesses built.
  absl::Status RecordSuccess(const LoginAttempt& attempt);

 private:
  db::Pool& pool_;
  Repository& repo_;
  const Clock& clock_;
  const LoginGuardOptions options_;
};

}  // namespace gpuaas::auth

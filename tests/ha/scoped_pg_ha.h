// A private PostgreSQL HA cluster owned by one test: tools/pg-ha's etcd and two Patroni nodes (a
// primary and a synchronous standby) on free loopback ports in a fresh temp dir, stopped and
// removed by the destructor. Starting takes 10-20 s (a bootstrap, then a base backup), so only
// drills that move the primary use it.
#pragma once

#include <sys/types.h>

#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"

namespace gpuaas::ha_testing {

// One line of `pg-ha status`.
struct PgHaMember {
  std::string name;       // node1, node2
  std::string role;       // leader, sync_standby, replica
  std::string state;      // running, streaming, stopped, starting...
  int port = 0;           // its PostgreSQL port
  pid_t postmaster = -1;  // -1 when it has none
};

class ScopedPgHa final {
 public:
  // Bootstraps and starts the cluster (--fast: no fsync), and creates database "gpuaas". Blocks
  // until there is a leader with a synchronous standby. Errors: INTERNAL (details on stderr).
  static absl::StatusOr<std::unique_ptr<ScopedPgHa>> Create();
  ~ScopedPgHa();
  ScopedPgHa(const ScopedPgHa&) = delete;
  ScopedPgHa& operator=(const ScopedPgHa&) = delete;

  // The superuser's multi-host DSN (target_session_attrs=read-write) on database "gpuaas",
  // which Create made: it reaches whichever node is the primary.
  const std::string& dsn() const { return dsn_; }
  const std::string& dir() const { return dir_; }

  // The members as Patroni's REST API reports them. Blocks briefly. Errors: UNAVAILABLE (no
  // node's API answered).
  absl::StatusOr<std::vector<PgHaMember>> Members();
  // The member whose role is `role`. Errors: NOT_FOUND (none has it now), as Members.
  absl::StatusOr<PgHaMember> MemberWithRole(const std::string& role);
  // Blocks until a member other than `old_leader` leads and runs (a promotion), and returns
  // when it saw that. Errors: DEADLINE_EXCEEDED after `timeout`.
  absl::StatusOr<absl::Time> WaitForNewLeader(const std::string& old_leader,
                                              absl::Duration timeout);

 private:
  explicit ScopedPgHa(std::string dir) : dir_(std::move(dir)) {}
  // Runs tools/pg-ha with `args`; returns its stdout.
  absl::StatusOr<std::string> RunScript(const std::string& args);

  const std::string dir_;
  std::string dsn_;
};

// The first column of `sql`'s rows (cast it to text), read on the primary that `dsn` (a
// multi-host DSN) reaches now. Errors: as db::Pool's.
absl::StatusOr<std::set<std::string>> ReadColumn(const std::string& dsn, const std::string& sql);

}  // namespace gpuaas::ha_testing

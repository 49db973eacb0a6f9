#include "tests/ha/scoped_pg_ha.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "libs/db/db.h"
#include "libs/testing/pg_test.h"
#include "libs/testing/shell_output.h"

#ifndef GPUAAS_PG_HA_SCRIPT
#error "GPUAAS_PG_HA_SCRIPT must name tools/pg-ha (set by tests/ha/CMakeLists.txt)"
#endif

namespace gpuaas::ha_testing {

absl::StatusOr<std::unique_ptr<ScopedPgHa>> ScopedPgHa::Create() {
  // Under /tmp: the postgres user must reach it.
  char tmpl[] = "/tmp/gpuaas-scoped-pg-ha.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) return absl::InternalError("mkdtemp failed");
  std::unique_ptr<ScopedPgHa> cluster(new ScopedPgHa(tmpl));
  absl::StatusOr<std::string> out = cluster->RunScript(absl::StrCat("--fast start '", tmpl, "'"));
  if (!out.ok()) return out.status();
  const std::string postgres_dsn(absl::StripAsciiWhitespace(*out));
  absl::Status s = db::ExecWithoutTransaction(postgres_dsn, "CREATE DATABASE gpuaas");
  if (!s.ok()) return s;
  cluster->dsn_ = gpuaas::testing::DsnForDatabase(postgres_dsn, "gpuaas");
  return cluster;
}

ScopedPgHa::~ScopedPgHa() {
  (void)RunScript(absl::StrCat("stop '", dir_, "'"));
  std::error_code ignored;
  std::filesystem::remove_all(dir_, ignored);
}

absl::StatusOr<std::vector<PgHaMember>> ScopedPgHa::Members() {
  absl::StatusOr<std::string> out = RunScript(absl::StrCat("status '", dir_, "' 2>/dev/null"));
  if (!out.ok()) return absl::UnavailableError(out.status().message());
  std::vector<PgHaMember> members;
  std::istringstream lines(*out);
  std::string pid;
  PgHaMember m;
  while (lines >> m.name >> m.role >> m.state >> m.port >> pid) {
    m.postmaster = pid == "-" ? -1 : std::atoi(pid.c_str());
    members.push_back(m);
  }
  return members;
}

absl::StatusOr<PgHaMember> ScopedPgHa::MemberWithRole(const std::string& role) {
  absl::StatusOr<std::vector<PgHaMember>> members = Members();
  if (!members.ok()) return members.status();
  for (const PgHaMember& m : *members) {
    if (m.role == role) return m;
  }
  return absl::NotFoundError(absl::StrCat("no member is ", role));
}

absl::StatusOr<absl::Time> ScopedPgHa::WaitForNewLeader(const std::string& old_leader,
                                                        absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    absl::StatusOr<PgHaMember> leader = MemberWithRole("leader");
    if (leader.ok() && leader->name != old_leader && leader->state == "running") {
      return absl::Now();
    }
    absl::SleepFor(absl::Milliseconds(100));
  }
  return absl::DeadlineExceededError(
      absl::StrCat("no member but ", old_leader, " leads after ", absl::FormatDuration(timeout)));
}

absl::StatusOr<std::string> ScopedPgHa::RunScript(const std::string& args) {
  // dir_ comes from mkdtemp and holds no quote, so single quotes suffice.
  return gpuaas::testing::ShellOutput(absl::StrCat("'", GPUAAS_PG_HA_SCRIPT, "' ", args));
}

absl::StatusOr<std::set<std::string>> ReadColumn(const std::string& dsn, const std::string& sql) {
  absl::StatusOr<std::unique_ptr<db::Pool>> pool = db::Pool::Create({.dsn = dsn});
  if (!pool.ok()) return pool.status();
  std::set<std::string> out;
  absl::Status s = (*pool)->RunInTransaction("read column", [&](db::Tx& tx) {
    out.clear();
    for (const db::Row& row : tx.Exec(sql)) out.insert(row.Get<std::string>(0));
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

}  // namespace gpuaas::ha_testing

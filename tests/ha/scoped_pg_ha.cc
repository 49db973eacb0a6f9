#include "tests/ha/scoped_pg_ha.h"

#include <cstdlib>
#include <filesystem>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
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
  cluster->dsn_ = std::string(absl::StripAsciiWhitespace(*out));
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

absl::StatusOr<std::string> ScopedPgHa::RunScript(const std::string& args) {
  // dir_ comes from mkdtemp and holds no quote, so single quotes suffice.
  return gpuaas::testing::ShellOutput(absl::StrCat("'", GPUAAS_PG_HA_SCRIPT, "' ", args));
}

}  // namespace gpuaas::ha_testing

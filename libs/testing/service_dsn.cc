#include "libs/testing/service_dsn.h"

#include <gtest/gtest.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <system_error>
#include <vector>

#include "absl/strings/str_cat.h"
#include "libs/db/db.h"
#include "libs/db/dsn.h"

#ifndef GPUAAS_PG_SERVICE_ROLE_SCRIPT
#error "GPUAAS_PG_SERVICE_ROLE_SCRIPT must name tools/pg-service-role (libs/testing/CMakeLists.txt)"
#endif

extern char** environ;

namespace gpuaas::testing {
namespace {

namespace fs = std::filesystem;

// Runs argv[0] with argv, its output on ours; its exit status, or -1 when it could not start.
int Run(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  if (posix_spawn(&pid, args[0], nullptr, nullptr, args.data(), environ) != 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string DatabaseOf(const std::string& dsn) {
  return db::DsnParam(dsn, "dbname").value_or(db::DsnParam(dsn, "user").value_or("postgres"));
}

}  // namespace

fs::path RolePassfileDir(const std::string& admin_dsn) {
  if (std::optional<std::string> passfile = db::DsnParam(admin_dsn, "passfile")) {
    return fs::path(*passfile).parent_path() / "roles";
  }
  return fs::temp_directory_path() / absl::StrCat("gpuaas-pgpass-", getuid(), "-",
                                                  db::DsnParam(admin_dsn, "port").value_or(""));
}

std::string ServiceDsn(const std::string& admin_dsn, std::string_view service) {
  const std::string role = DatabaseOf(admin_dsn) + "_" + std::string(service);
  const fs::path dir = RolePassfileDir(admin_dsn);
  std::error_code ec;
  fs::create_directories(dir, ec);
  chmod(dir.c_str(), 0700);
  const std::string passfile = (dir / role).string();
  const int status =
      Run({GPUAAS_PG_SERVICE_ROLE_SCRIPT, admin_dsn, std::string(service), role, passfile});
  if (status != 0) {
    ADD_FAILURE() << "tools/pg-service-role for " << service << " exited " << status;
    return "";
  }
  return db::WithDsnParam(db::WithDsnParam(admin_dsn, "user", role), "passfile", passfile);
}

std::string DropServiceRoles(const std::string& admin_dsn, const std::string& database) {
  // `database` is one of PgTest's own names (t_<hex>), so it needs no quoting.
  const std::string prefix = database + "_";
  absl::Status s = db::ExecWithoutTransaction(
      admin_dsn,
      absl::StrCat("DO $$ DECLARE r text; BEGIN FOR r IN SELECT rolname FROM pg_roles "
                   "WHERE starts_with(rolname, '",
                   prefix, "') LOOP EXECUTE format('DROP ROLE %I', r); END LOOP; END $$"));
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(RolePassfileDir(admin_dsn), ec)) {
    if (e.path().filename().string().starts_with(prefix)) fs::remove(e.path(), ec);
  }
  return s.ok() ? "" : std::string(s.message());
}

}  // namespace gpuaas::testing

// A service's own database role on a test database, as `tools/gpuaas up` gives each service:
// tests hand a service ServiceDsn(dsn(), "stock") instead of their superuser DSN, so services
// run in tests with the rights they have in the dev stack and in compose, and no more.
//
// The role is <database>_<service> (roles are cluster-wide; the database name keeps tests that
// share the cluster apart), made by tools/pg-service-role: it owns schema <service>, may connect
// to this database only, and is no superuser. Its password file is 0600 in RolePassfileDir;
// PgTest::TearDown drops the roles of its database and their files.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>

namespace gpuaas::testing {

// Provisions `service`'s role and schema on the database of `admin_dsn` (a superuser DSN) and
// returns the DSN the service connects with: `admin_dsn` with user=<database>_<service> and
// passfile=<its password file>. Idempotent; runs a script, so it blocks for tens of
// milliseconds. Fails the test (ADD_FAILURE) and returns "" when provisioning fails.
std::string ServiceDsn(const std::string& admin_dsn, std::string_view service);

// Where the password files of the roles on `admin_dsn`'s cluster live: beside the cluster's own
// password file (the fixture's private directory), else a 0700 directory under the temp dir.
std::filesystem::path RolePassfileDir(const std::string& admin_dsn);

// Drops the roles ServiceDsn made for `database` (after the database itself is dropped) and
// their password files. Returns an error message, or "" when all went well.
std::string DropServiceRoles(const std::string& admin_dsn, const std::string& database);

}  // namespace gpuaas::testing

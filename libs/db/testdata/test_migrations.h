// Declares the migration table gpuaas_migrations builds from this folder (see
// libs/db/CMakeLists.txt), as a service's own migrations.h would.
#pragma once

#include <span>

#include "libs/db/migration.h"

namespace gpuaas::db::testdata {

std::span<const Migration> TestMigrations();

}  // namespace gpuaas::db::testdata

// One embedded, forward-only schema migration. Kept apart from db.h so generated migration
// tables (gpuaas_migrations in cmake/gpuaas.cmake) and the headers that declare them do not pull
// in libpqxx.
#pragma once

#include <string_view>

namespace gpuaas::db {

struct Migration {
  int version;            // 1, 2, ... from the file name NNNN_name.sql
  std::string_view name;  // "0001_init"
  std::string_view sql;   // one or more statements, run as one transaction
};

}  // namespace gpuaas::db

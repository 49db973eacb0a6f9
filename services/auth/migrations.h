#pragma once

#include <span>

#include "libs/db/db.h"

namespace gpuaas::auth {

// The auth schema's migrations, embedded from services/auth/migrations/*.sql at build time.
std::span<const db::Migration> Migrations();

}  // namespace gpuaas::auth

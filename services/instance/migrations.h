// The instance schema's migrations (migrations/NNNN_*.sql), embedded at build time.
#pragma once

#include <span>

#include "libs/db/migration.h"

namespace gpuaas::instance {

std::span<const db::Migration> Migrations();

}  // namespace gpuaas::instance

// Small edits of libpq connection strings, in either form libpq accepts: a URI
// ("postgresql://user@host:port/db?k=v") or key/value pairs ("host=... dbname=...").
// libpq lets a later setting override an earlier one in both forms, so edits append.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace gpuaas::db {

// Returns `dsn` with `key` set to `value`, overriding any earlier setting. `key` must be a libpq
// keyword; `value` is quoted/escaped as the form requires. Does not block.
std::string WithDsnParam(std::string_view dsn, std::string_view key, std::string_view value);

// True when `dsn` already sets `key` (a libpq keyword such as connect_timeout).
bool DsnHasParam(std::string_view dsn, std::string_view key);

// The value `dsn` gives `key` (a libpq keyword such as dbname), as libpq reads it; nullopt when
// it gives none or does not parse. Does not block.
std::optional<std::string> DsnParam(std::string_view dsn, std::string_view key);

}  // namespace gpuaas::db

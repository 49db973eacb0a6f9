// Named spdlog loggers, one per component, all sharing one stderr sink and format.
#pragma once

#include <spdlog/spdlog.h>

#include <memory>
#include <string_view>

namespace gpuaas {

// Returns the logger for `component` ("auth", "rpc", "db" ...), creating it on first use.
// Thread-safe.
std::shared_ptr<spdlog::logger> Logger(std::string_view component);

// Sets the level of every logger, present and future: trace, debug, info, warn, error, off.
void SetLogLevel(std::string_view level);

}  // namespace gpuaas

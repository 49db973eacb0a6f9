// Where gpuaasctl and the load generator find the auth service and keep the login token.
//
// The auth address is resolved in a fixed order so scripts can rely on it: the --auth-addr
// flag, then $GPUAAS_AUTH_ADDR, then GPUAAS_AUTH_ADDR in the nearest .gpuaas/stack.env (written
// by `tools/gpuaas up`) found by walking up from the current directory, then localhost:50051.
// Environment lookups go through a function so tests need not touch the real environment.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::ctl {

inline constexpr std::string_view kDefaultAuthAddr = "localhost:50051";
inline constexpr std::string_view kAuthAddrEnv = "GPUAAS_AUTH_ADDR";

// Returns the value of an environment variable, or nullopt when unset or empty.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// Reads the real process environment.
EnvLookup ProcessEnv();

// Parses `KEY=value` lines: blank lines and `#` comments are skipped, an `export ` prefix and
// one pair of matching quotes around the value are removed, later keys win. Lines without `=`
// are ignored, so a stray line never hides the address. Never fails.
std::map<std::string, std::string> ParseStackEnv(std::string_view text);

// The nearest `.gpuaas/stack.env` in `start` or one of its parents, or nullopt.
std::optional<std::filesystem::path> FindStackEnv(const std::filesystem::path& start);

// The auth address by the order above. `flag` is the --auth-addr value (empty = not given).
// Error: NOT_FOUND never; FAILED_PRECONDITION when a stack.env exists but cannot be read.
absl::StatusOr<std::string> ResolveAuthAddr(std::string_view flag, const EnvLookup& env,
                                            const std::filesystem::path& cwd);

// $XDG_CONFIG_HOME/gpuaas/token.json, else $HOME/.config/gpuaas/token.json.
// Error: FAILED_PRECONDITION when neither variable is set.
absl::StatusOr<std::filesystem::path> TokenPath(const EnvLookup& env);

}  // namespace gpuaas::ctl

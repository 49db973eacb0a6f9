// Where a binary's settings come from, in one fixed order that scripts can rely on: the flag,
// then the environment variable, then the same variable in the nearest .gpuaas/stack.env
// (written by `tools/gpuaas up`) found by walking up from the working directory, then a
// default. So a binary started inside a checkout with a dev stack running needs no flags, and
// one started by systemd or compose takes its environment.
//
// The environment is read through an EnvLookup so only wiring code touches the real one
// (ProcessEnv) and tests pass a map.
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace gpuaas::client {

// The value of an environment variable, or nullopt when unset or empty.
using EnvLookup = std::function<std::optional<std::string>(std::string_view)>;

// Reads the real process environment. Never fails.
EnvLookup ProcessEnv();

// An environment holding just `vars` (empty values count as unset), for tests and for
// binaries that take their variables from somewhere else. Never fails.
EnvLookup MapEnv(std::map<std::string, std::string> vars);

// Parses `KEY=value` lines: blank lines and `#` comments are skipped, an `export ` prefix and
// one pair of matching quotes around the value are removed, later keys win. Lines without `=`
// are ignored, so a stray line never hides a setting. Never fails.
std::map<std::string, std::string> ParseStackEnv(std::string_view text);

// The nearest `.gpuaas/stack.env` in `start` or one of its parents, or nullopt. Blocks on
// file-system lookups.
std::optional<std::filesystem::path> FindStackEnv(const std::filesystem::path& start);

// Resolves settings by the order above. The stack.env file is read once, on first need.
// Not thread-safe: resolve at startup, in the wiring.
class Settings final {
 public:
  // `cwd` is where the walk up for stack.env starts.
  Settings(EnvLookup env, std::filesystem::path cwd) : env_(std::move(env)), cwd_(std::move(cwd)) {}

  // `flag` if not empty, else `var` from the environment, else from stack.env, else
  // `fallback`. Error: FAILED_PRECONDITION when a stack.env exists but cannot be read.
  absl::StatusOr<std::string> Get(std::string_view flag, std::string_view var,
                                  std::string_view fallback = "");

 private:
  EnvLookup env_;
  std::filesystem::path cwd_;
  std::optional<std::map<std::string, std::string>> stack_;  // loaded lazily
};

}  // namespace gpuaas::client

// Where gpuaasctl and the load generator find the auth service and keep the login token.
//
// Every setting is resolved in a fixed order so scripts can rely on it: the flag, then the
// environment variable, then the same variable in the nearest .gpuaas/stack.env (written by
// `tools/gpuaas up`) found by walking up from the current directory, then a default. For the
// address that is --auth-addr, GPUAAS_AUTH_ADDR, stack.env, localhost:50051; TLS files follow
// the same order with --ca/--cert/--key and GPUAAS_TLS_CA/_CERT/_KEY, so a `tools/gpuaas up
// --tls` stack works without flags. Environment lookups go through a function so tests need not
// touch the real environment.
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

struct TlsFiles {
  std::string ca_file;    // empty = plaintext
  std::string cert_file;  // client certificate for mutual TLS (needs key_file)
  std::string key_file;
};

struct Endpoint {
  std::string addr;
  TlsFiles tls;
};

// Reads settings by the order above; the stack.env file is read once, on first need.
class Settings final {
 public:
  Settings(EnvLookup env, std::filesystem::path cwd) : env_(std::move(env)), cwd_(std::move(cwd)) {}

  // `flag` if not empty, else the variable from the environment, else from stack.env, else
  // `fallback`. Error: FAILED_PRECONDITION when a stack.env exists but cannot be read.
  absl::StatusOr<std::string> Get(std::string_view flag, std::string_view var,
                                  std::string_view fallback = "");

  // The auth service's address and TLS files; `flags` holds what was given on the command line.
  absl::StatusOr<Endpoint> AuthEndpoint(const Endpoint& flags);

 private:
  EnvLookup env_;
  std::filesystem::path cwd_;
  std::optional<std::map<std::string, std::string>> stack_;  // loaded lazily
};

// The auth address by the order above. `flag` is the --auth-addr value (empty = not given).
// Error: FAILED_PRECONDITION when a stack.env exists but cannot be read.
absl::StatusOr<std::string> ResolveAuthAddr(std::string_view flag, const EnvLookup& env,
                                            const std::filesystem::path& cwd);

// $XDG_CONFIG_HOME/gpuaas/token.json, else $HOME/.config/gpuaas/token.json.
// Error: FAILED_PRECONDITION when neither variable is set.
absl::StatusOr<std::filesystem::path> TokenPath(const EnvLookup& env);

}  // namespace gpuaas::ctl

// Options whose environment fallback is derived, never spelled per flag: the process's name and
// the flag's first long name make it (`--stock-addr` of agent <- GPUAAS_AGENT_STOCK_ADDR).
//
//   service::EnvOptions options(app, "agent");
//   options.Add("--stock-addr", f.stock_addr, "the stock service")->capture_default_str();
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <string_view>
#include <type_traits>

#include "absl/time/time.h"
#include "libs/service/process_flags.h"

namespace gpuaas::service {

class EnvOptions final {
 public:
  EnvOptions(CLI::App& app, std::string_view process) : app_(app), process_(process) {}

  // Adds the option `names` ("--listen,--listen-address") bound to `value`, whose value now is
  // the default --help shows; a bool is a flag (no value). Returns the option for further
  // checks. CLI11 throws on a repeated name.
  template <typename T>
  CLI::Option* Add(const std::string& names, T& value, const std::string& description = "") {
    CLI::Option* option;
    if constexpr (std::is_same_v<T, bool>) {
      option = app_.add_flag(names, value, description);
    } else {
      option = app_.add_option(names, value, description)->capture_default_str();
    }
    return option->envname(FlagEnvName(process_, names));
  }

  // A duration ("30s", "200ms", "1m") read by ParseDurationFlag; `allow_zero` lets "0" mean
  // "unset". A value it refuses ends the parse with its message and exit code 2 (CLI11_PARSE),
  // the code of every other bad value a process finds.
  CLI::Option* Add(const std::string& names, absl::Duration& value, const std::string& description,
                   bool allow_zero = false);

 private:
  CLI::App& app_;
  std::string process_;
};

}  // namespace gpuaas::service

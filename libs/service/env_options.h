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

#include "libs/service/process_flags.h"

namespace gpuaas::service {

class EnvOptions final {
 public:
  EnvOptions(CLI::App& app, std::string_view process) : app_(app), process_(process) {}

  // Adds the option `names` ("--listen,--listen-address") bound to `value`; a bool is a flag
  // (no value). Returns the option for further checks. CLI11 throws on a repeated name.
  template <typename T>
  CLI::Option* Add(const std::string& names, T& value, const std::string& description = "") {
    CLI::Option* option;
    if constexpr (std::is_same_v<T, bool>) {
      option = app_.add_flag(names, value, description);
    } else {
      option = app_.add_option(names, value, description);
    }
    return option->envname(FlagEnvName(process_, names));
  }

 private:
  CLI::App& app_;
  std::string process_;
};

}  // namespace gpuaas::service
